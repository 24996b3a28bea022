// notify_load: a load generator for `status-poller notifications serve`, playing Apple's sender.
//
// It makes a test PKI of its own in -pki (root, an intermediate with Apple's WWDR marker
// 1.2.840.113635.100.6.2.1, a leaf with 1.2.840.113635.100.6.11.1: the shape of Apple's chain;
// kept there, so the receiver can be given DIR/root.pem before the load starts), signs -count V2 notifications (DID_RENEW, each with its nested
// signedTransactionInfo and signedRenewalInfo) for -chains chains bench-0 … bench-N-1, all before
// the clock starts, then posts them over -connections keep-alive connections as fast as the
// receiver answers. Like Apple, it sends a notification again when the answer is not 200 (with
// -retry); it prints one JSON line: sent, answered 200, other statuses, seconds, rate, p50/p99/max
// latency in ms. It never reads the database: the bench script checks that.
//
//	notify_load -pki DIR [-url URL] [-count N] [-chains N] [-connections N] [-bundle ID] [-app-apple-id N] [-retry] [-prepare-only] [-rows FILE]
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

type authority struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	der  []byte
}

func issue(subject string, parent *authority, isCA bool, marker asn1.ObjectIdentifier, serial int64) *authority {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: subject, Organization: []string{"notify_load"}},
		NotBefore:             time.Now().Add(-48 * time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		BasicConstraintsValid: true,
		IsCA:                  isCA,
	}
	if isCA {
		template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	} else {
		template.KeyUsage = x509.KeyUsageDigitalSignature
	}
	if marker != nil {
		template.ExtraExtensions = []pkix.Extension{{Id: marker, Value: []byte{0x05, 0x00}}}
	}
	signerCert, signerKey := template, key
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, signerCert, &key.PublicKey, signerKey)
	check(err)
	cert, err := x509.ParseCertificate(der)
	check(err)
	return &authority{key: key, cert: cert, der: der}
}

type signer struct {
	leaf   *authority
	header string
}

func (s *signer) sign(payload any) string {
	body, err := json.Marshal(payload)
	check(err)
	input := s.header + "." + base64.RawURLEncoding.EncodeToString(body)
	digest := sha256.Sum256([]byte(input))
	r, sv, err := ecdsa.Sign(rand.Reader, s.leaf.key, digest[:])
	check(err)
	signature := make([]byte, 64)
	r.FillBytes(signature[:32])
	sv.FillBytes(signature[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(signature)
}

func main() {
	pkiDir := flag.String("pki", "", "directory of the test PKI (made when empty); the receiver trusts DIR/root.pem")
	url := flag.String("url", "http://127.0.0.1:8080/app-store/notifications", "the receiver")
	count := flag.Int("count", 20000, "notifications to send")
	chains := flag.Int("chains", 10000, "distinct original_transaction_ids bench-0 … bench-N-1")
	connections := flag.Int("connections", 64, "concurrent keep-alive connections")
	bundle := flag.String("bundle", "com.example.premium", "bundleId")
	appAppleID := flag.Int64("app-apple-id", 1234567890, "appAppleId")
	retry := flag.Bool("retry", false, "send a notification again until it is answered 200, as Apple does")
	prepareOnly := flag.Bool("prepare-only", false, "make the PKI (and -rows) and exit")
	rowsFile := flag.String("rows", "", "write the rows owning the chains as CSV (user_id,original_transaction_id,expires_at_ms) here")
	flag.Parse()
	if *pkiDir == "" {
		fmt.Fprintln(os.Stderr, "notify_load: -pki is required")
		os.Exit(2)
	}
	check(os.MkdirAll(*pkiDir, 0o755))
	root, intermediate, leaf := load(*pkiDir)
	if root == nil {
		root = issue("notify_load root", nil, true, nil, 1)
		intermediate = issue("notify_load intermediate", root, true, asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 2, 1}, 2)
		leaf = issue("notify_load leaf", intermediate, false, asn1.ObjectIdentifier{1, 2, 840, 113635, 100, 6, 11, 1}, 3)
		save(*pkiDir, "root", root)
		save(*pkiDir, "intermediate", intermediate)
		save(*pkiDir, "leaf", leaf)
		check(os.WriteFile(*pkiDir+"/root.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.der}), 0o644))
	}
	header, err := json.Marshal(map[string]any{
		"alg": "ES256",
		"x5c": []string{base64.StdEncoding.EncodeToString(leaf.der), base64.StdEncoding.EncodeToString(intermediate.der), base64.StdEncoding.EncodeToString(root.der)},
	})
	check(err)
	s := &signer{leaf: leaf, header: base64.RawURLEncoding.EncodeToString(header)}
	now := time.Now().UnixMilli()
	period := int64(30 * 24 * 3600 * 1000)
	if *rowsFile != "" {
		var csv bytes.Buffer
		csv.WriteString("user_id,original_transaction_id,expires_at\n")
		for c := 0; c < *chains; c++ {
			fmt.Fprintf(&csv, "bench-user-%d,bench-%d,%d\n", c, c, now+period/2)
		}
		check(os.WriteFile(*rowsFile, csv.Bytes(), 0o644))
	}
	if *prepareOnly {
		return
	}

	// Every body signed before the clock starts: the figure is the receiver's, not the signing's.
	bodies := make([][]byte, *count)
	for i := 0; i < *count; i++ {
		chain := fmt.Sprintf("bench-%d", i%*chains)
		renewal := i / *chains // the nth renewal of the chain: later ones are signed later
		signedDate := now + int64(i)
		expires := now + period/2 + int64(renewal+1)*period
		transaction := s.sign(map[string]any{
			"transactionId": fmt.Sprintf("t-%d", i), "originalTransactionId": chain, "bundleId": *bundle,
			"productId": "com.example.premium.monthly", "purchaseDate": expires - period, "expiresDate": expires,
			"type": "Auto-Renewable Subscription", "environment": "Production", "signedDate": signedDate,
		})
		renewalInfo := s.sign(map[string]any{
			"originalTransactionId": chain, "productId": "com.example.premium.monthly", "autoRenewProductId": "com.example.premium.monthly",
			"autoRenewStatus": 1, "environment": "Production", "signedDate": signedDate,
		})
		notification := s.sign(map[string]any{
			"notificationType": "DID_RENEW", "notificationUUID": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "signedDate": signedDate,
			"version": "2.0",
			"data": map[string]any{
				"appAppleId": *appAppleID, "bundleId": *bundle, "bundleVersion": "1", "environment": "Production",
				"signedTransactionInfo": transaction, "signedRenewalInfo": renewalInfo, "status": 1,
			},
		})
		body, err := json.Marshal(map[string]string{"signedPayload": notification})
		check(err)
		bodies[i] = body
	}

	transport := &http.Transport{MaxIdleConns: *connections, MaxIdleConnsPerHost: *connections, MaxConnsPerHost: *connections}
	client := &http.Client{Transport: transport, Timeout: 60 * time.Second}
	var next int64 = -1
	var ok, other, transportErrors int64
	latencies := make([][]float64, *connections)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *connections; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := atomic.AddInt64(&next, 1)
				if i >= int64(len(bodies)) {
					return
				}
				for attempt := 0; ; attempt++ {
					t0 := time.Now()
					response, err := client.Post(*url, "application/json", bytes.NewReader(bodies[i]))
					status := 0
					if err == nil {
						io.Copy(io.Discard, response.Body)
						response.Body.Close()
						status = response.StatusCode
					} else {
						atomic.AddInt64(&transportErrors, 1)
					}
					latencies[w] = append(latencies[w], float64(time.Since(t0).Microseconds())/1000)
					if status == 200 {
						atomic.AddInt64(&ok, 1)
						break
					}
					atomic.AddInt64(&other, 1)
					if !*retry || attempt > 1000 {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}(w)
	}
	wg.Wait()
	seconds := time.Since(start).Seconds()
	var all []float64
	for _, l := range latencies {
		all = append(all, l...)
	}
	sort.Float64s(all)
	quantile := func(q float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return all[int(q*float64(len(all)-1))]
	}
	out, _ := json.Marshal(map[string]any{
		"sent": *count, "ok": ok, "other": other, "transport_errors": transportErrors, "seconds": seconds,
		"per_second": float64(ok) / seconds, "p50_ms": quantile(0.5), "p99_ms": quantile(0.99), "max_ms": quantile(1), "connections": *connections,
	})
	fmt.Println(string(out))
}

func save(dir, name string, a *authority) {
	key, err := x509.MarshalECPrivateKey(a.key)
	check(err)
	check(os.WriteFile(dir+"/"+name+".der", a.der, 0o600))
	check(os.WriteFile(dir+"/"+name+".key", key, 0o600))
}

// load reads a PKI saved by save; nils when there is none.
func load(dir string) (*authority, *authority, *authority) {
	var loaded []*authority
	for _, name := range []string{"root", "intermediate", "leaf"} {
		der, err := os.ReadFile(dir + "/" + name + ".der")
		if err != nil {
			return nil, nil, nil
		}
		keyDER, err := os.ReadFile(dir + "/" + name + ".key")
		check(err)
		key, err := x509.ParseECPrivateKey(keyDER)
		check(err)
		cert, err := x509.ParseCertificate(der)
		check(err)
		loaded = append(loaded, &authority{key: key, cert: cert, der: der})
	}
	return loaded[0], loaded[1], loaded[2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "notify_load:", err)
		os.Exit(1)
	}
}
