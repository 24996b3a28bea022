#!/usr/bin/env python3
"""An HTTP CONNECT proxy on 127.0.0.1 for the package check, as a company's squid would be.

It asks for Basic credentials (407 without the right ones), opens a tunnel to the target of each
`CONNECT host:port` it is allowed to and splices bytes both ways; a target it cannot reach (a name
that does not resolve) gets 502 Bad Gateway, as squid answers. Each CONNECT is one JSON line in
--log: the target, whether the credentials were right, and the status answered — never the
credentials themselves. The port it listens on is written to --port-file once it listens.

    connect_proxy.py --credentials-file FILE --log FILE --port-file FILE

FILE of --credentials-file holds `user:password`. Runs until killed.
"""
import argparse
import base64
import json
import os
import socket
import threading


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--credentials-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    arguments = parser.parse_args()
    with open(arguments.credentials_file) as file:
        credentials = file.read().strip()
    expected = "Basic " + base64.b64encode(credentials.encode()).decode()
    log = open(arguments.log, "a", buffering=1)
    lock = threading.Lock()

    def record(target, authorized, status):
        with lock:
            log.write(json.dumps({"target": target, "authorized": authorized, "status": status}) + "\n")

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(256)
    with open(arguments.port_file + ".tmp", "w") as file:
        file.write(f"{listener.getsockname()[1]}\n")
    os.replace(arguments.port_file + ".tmp", arguments.port_file)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, expected, record), daemon=True).start()


def serve(client, expected, record):
    try:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk or len(head) > 16384:
                return
            head += chunk
        head, _, early = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if method != "CONNECT":
            record(target, None, 405)
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        authorized = headers.get("proxy-authorization") == expected
        if not authorized:
            record(target, False, 407)
            client.sendall(b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="check"\r\n'
                           b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            return
        host, _, port = target.rpartition(":")
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        except (OSError, ValueError):
            record(target, True, 502)
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        record(target, True, 200)
        upstream.settimeout(None)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if early:
            upstream.sendall(early)
        other = threading.Thread(target=splice, args=(upstream, client), daemon=True)
        other.start()
        splice(client, upstream)
        other.join()
        upstream.close()
    except OSError:
        pass
    finally:
        client.close()


def splice(source, sink):
    """Copies source to sink until source ends, then ends sink's writing half."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


if __name__ == "__main__":
    main()
