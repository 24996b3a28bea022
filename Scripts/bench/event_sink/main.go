// event_sink: the events bench's loopback endpoint, in Go so that checking signatures does not take
// the CPU the deliverer under test needs (the harness's Python endpoint took two thirds of a core at
// 2,000 events/s on the bench's 2 cores).
//
// It judges each POST as Scripts/reliability/event_kill_test.py's endpoint does: 401 unless one of
// the webhook-signature's v1 values is the base64 HMAC-SHA256 of "id.timestamp.body" under the key
// and the timestamp is within 5 minutes; 500 for a seeded share of -failure-rate; 400 if the body's
// id is not the webhook-id; else 204. It prints "port N" once listening, then one line per request
// on stdout — "204 <event id> <user id> <unix seconds of arrival>", "401", "400", "500", or "cut"
// (a body shorter than its content-length: the sender died mid-request) — for the harness to judge
// order and lag. The key comes on stdin's first line (base64, the secret without "whsec_"), never argv.
//
//	event_sink [-failure-rate F] [-seed N]
package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

type sink struct {
	key         []byte
	failureRate float64
	mu          sync.Mutex
	rng         *rand.Rand
	out         *bufio.Writer
}

type event struct {
	ID   string `json:"id"`
	Data struct {
		UserID string `json:"user_id"`
	} `json:"data"`
}

func (s *sink) record(line string) {
	s.mu.Lock()
	s.out.WriteString(line)
	s.out.WriteByte('\n')
	s.out.Flush()
	s.mu.Unlock()
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || int64(len(body)) < r.ContentLength {
		s.record("cut")
		return
	}
	id, stamp := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(id + "." + stamp + "."))
	mac.Write(body)
	expected := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	signed := false
	for _, part := range strings.Split(r.Header.Get("webhook-signature"), " ") {
		if strings.HasPrefix(part, "v1,") && hmac.Equal([]byte(part[3:]), []byte(expected)) {
			signed = true
		}
	}
	seconds, _ := strconv.ParseInt(stamp, 10, 64)
	if !signed || math.Abs(float64(time.Now().Unix()-seconds)) > 300 {
		s.record("401")
		w.WriteHeader(401)
		return
	}
	s.mu.Lock()
	fail := s.rng.Float64() < s.failureRate
	s.mu.Unlock()
	if fail {
		s.record("500")
		w.WriteHeader(500)
		return
	}
	var e event
	if json.Unmarshal(body, &e) != nil || e.ID != id {
		s.record("400")
		w.WriteHeader(400)
		return
	}
	arrived := float64(time.Now().UnixNano()) / 1e9
	s.record(fmt.Sprintf("204 %s %s %.6f", id, e.Data.UserID, arrived))
	w.WriteHeader(204)
}

func main() {
	failureRate := flag.Float64("failure-rate", 0, "share of signed requests answered 500")
	seed := flag.Int64("seed", 39, "seed of the failures")
	flag.Parse()
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(os.Stderr, "event_sink: the key (base64) is expected on stdin's first line")
		os.Exit(2)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(line))
	if err != nil {
		fmt.Fprintln(os.Stderr, "event_sink: the key on stdin is not base64:", err)
		os.Exit(2)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "event_sink:", err)
		os.Exit(1)
	}
	s := &sink{key: key, failureRate: *failureRate, rng: rand.New(rand.NewSource(*seed)), out: bufio.NewWriter(os.Stdout)}
	s.record(fmt.Sprintf("port %d", listener.Addr().(*net.TCPAddr).Port))
	// Stdin's end (the harness closing it or dying) ends the sink.
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	server := &http.Server{Handler: s, ErrorLog: nil}
	server.Serve(listener)
}
