// The same poller written in Go, a benchmark peer for Scripts/bench.sh: net/http with a keep-alive
// transport sized to the concurrency, encoding/json into only the fields the write needs,
// database/sql + mattn/go-sqlite3, C worker goroutines and one writer goroutine with a prepared
// UPDATE. Like the Python peer it skips what it does not understand (a failure is only counted).
//
//	APPSTORE_SHARED_SECRET=… go-peer -database DB -url URL -concurrency C -now-ms MS -bundle-id ID [-commit-every N]
//
// Built by Scripts/bench/setup.sh in GOPATH mode over Debian's /usr/share/gocode (no module download).
// Prints one JSON line at the end: {"poller", "selected", "verified", "failed", "seconds"}.
package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

const hour = int64(3_600_000) // ms

// The nightly selection: never verified, an uploaded receipt, near expiry, billing retry, grace.
const dueSQL = `SELECT id, latest_receipt FROM subscriptions WHERE original_transaction_id IS NULL
  OR receipt_uploaded = 1 OR expires_at BETWEEN ?1 - 48 * ?2 AND ?1 + 24 * ?2
  OR (is_in_billing_retry = 1 AND expires_at >= ?1 - 60 * 24 * ?2) OR grace_period_expires_at >= ?1 - 24 * ?2`

const updateSQL = `UPDATE subscriptions SET original_transaction_id = ?, product_id = ?, environment = ?,
  expires_at = ?, grace_period_expires_at = ?, is_in_billing_retry = ?, auto_renew_status = ?,
  auto_renew_product_id = ?, cancelled_at = ?, latest_receipt = ?, last_verified_at = ?,
  last_attempt_at = ?, receipt_uploaded = 0, consecutive_failures = 0 WHERE id = ?`

type job struct {
	id      int64
	receipt string
}

type request struct {
	ReceiptData string `json:"receipt-data"`
	Password    string `json:"password"`
	ExcludeOld  bool   `json:"exclude-old-transactions"`
}

// Only the fields the write needs; Apple sends the numbers as strings.
type answer struct {
	Status      int    `json:"status"`
	Environment string `json:"environment"`
	Receipt     struct {
		BundleID string `json:"bundle_id"`
	} `json:"receipt"`
	LatestReceiptInfo []struct {
		OriginalTransactionID string `json:"original_transaction_id"`
		ProductID             string `json:"product_id"`
		ExpiresDateMs         string `json:"expires_date_ms"`
		CancellationDateMs    string `json:"cancellation_date_ms"`
	} `json:"latest_receipt_info"`
	PendingRenewalInfo []struct {
		OriginalTransactionID    string `json:"original_transaction_id"`
		AutoRenewStatus          string `json:"auto_renew_status"`
		AutoRenewProductID       string `json:"auto_renew_product_id"`
		IsInBillingRetryPeriod   string `json:"is_in_billing_retry_period"`
		GracePeriodExpiresDateMs string `json:"grace_period_expires_date_ms"`
	} `json:"pending_renewal_info"`
	LatestReceipt string `json:"latest_receipt"`
}

// What the writer stores for one verified row (the UPDATE's arguments, in order).
type result struct{ args []any }

// Optional values: an absent or unparsable string is NULL.
func nullableInt(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return nil
}

func nullableString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func main() {
	started := time.Now()
	database := flag.String("database", "", "SQLite database")
	url := flag.String("url", "", "verifyReceipt URL")
	concurrency := flag.Int("concurrency", 8, "requests in flight")
	nowMs := flag.Int64("now-ms", time.Now().UnixMilli(), "the run's clock, ms since 1970")
	bundleID := flag.String("bundle-id", "", "expected receipt.bundle_id")
	commitEvery := flag.Int("commit-every", 1, "answers per write transaction")
	flag.Parse()
	secret := os.Getenv("APPSTORE_SHARED_SECRET")
	if *database == "" || *url == "" || *bundleID == "" || *concurrency < 1 || *commitEvery < 1 || secret == "" {
		fmt.Fprintln(os.Stderr, "usage: APPSTORE_SHARED_SECRET=… go-peer -database DB -url URL -concurrency C -now-ms MS -bundle-id ID [-commit-every N]")
		os.Exit(2)
	}

	// One connection: the selection first, then the writer alone. The same journal settings as status-poller.
	db, err := sql.Open("sqlite3", "file:"+*database+"?_busy_timeout=10000")
	check(err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
	check(err)
	jobs := selectDue(db, *nowMs)

	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns: *concurrency, MaxIdleConnsPerHost: *concurrency, MaxConnsPerHost: *concurrency,
			IdleConnTimeout: 90 * time.Second,
		},
	}

	queue := make(chan job)
	results := make(chan result, *concurrency)
	var failed atomic.Int64
	var workers sync.WaitGroup
	for i := 0; i < *concurrency; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range queue {
				if r, ok := verify(client, *url, secret, *bundleID, *nowMs, j); ok {
					results <- r
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	written := make(chan int64)
	go func() { written <- writer(db, results, *commitEvery, &failed) }()

	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	workers.Wait()
	close(results)
	verified := <-written
	check(db.Close())

	name := "go"
	if *commitEvery > 1 {
		name = fmt.Sprintf("go-commit-%d", *commitEvery)
	}
	out, _ := json.Marshal(struct {
		Poller   string  `json:"poller"`
		Selected int     `json:"selected"`
		Verified int64   `json:"verified"`
		Failed   int64   `json:"failed"`
		Seconds  float64 `json:"seconds"`
	}{name, len(jobs), verified, failed.Load(), float64(time.Since(started).Milliseconds()) / 1000})
	fmt.Println(string(out))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// The due rows, read in full before any write (one connection).
func selectDue(db *sql.DB, nowMs int64) []job {
	rows, err := db.Query(dueSQL, nowMs, hour)
	check(err)
	defer rows.Close()
	var jobs []job
	for rows.Next() {
		var j job
		check(rows.Scan(&j.id, &j.receipt))
		jobs = append(jobs, j)
	}
	check(rows.Err())
	return jobs
}

// One receipt: POST, decode, pick the latest transaction and its renewal info. false: skip the row.
func verify(client *http.Client, url, secret, bundleID string, nowMs int64, j job) (result, bool) {
	body, _ := json.Marshal(request{ReceiptData: j.receipt, Password: secret, ExcludeOld: true})
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return result{}, false
	}
	var a answer
	err = json.NewDecoder(resp.Body).Decode(&a)
	io.Copy(io.Discard, resp.Body) // drain, so the connection goes back to the pool
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || a.Status != 0 || a.Receipt.BundleID != bundleID || len(a.LatestReceiptInfo) == 0 {
		return result{}, false
	}
	latest, latestExpires := 0, int64(-1)
	for i, e := range a.LatestReceiptInfo {
		if ms, err := strconv.ParseInt(e.ExpiresDateMs, 10, 64); err == nil && ms > latestExpires {
			latest, latestExpires = i, ms
		}
	}
	if latestExpires < 0 {
		return result{}, false
	}
	l := a.LatestReceiptInfo[latest]
	var grace, autoRenew, autoRenewProduct any
	retry := 0
	for _, p := range a.PendingRenewalInfo {
		if p.OriginalTransactionID == l.OriginalTransactionID {
			grace, autoRenew, autoRenewProduct = nullableInt(p.GracePeriodExpiresDateMs), nullableInt(p.AutoRenewStatus), nullableString(p.AutoRenewProductID)
			if p.IsInBillingRetryPeriod == "1" {
				retry = 1
			}
			break
		}
	}
	receipt := j.receipt
	if a.LatestReceipt != "" {
		receipt = a.LatestReceipt
	}
	return result{args: []any{
		l.OriginalTransactionID, l.ProductID, nullableString(a.Environment), latestExpires, grace, retry, autoRenew,
		autoRenewProduct, nullableInt(l.CancellationDateMs), receipt, nowMs, nowMs, j.id,
	}}, true
}

// The only writer: a prepared UPDATE, commitEvery answers per transaction (and at least every
// 50 ms, so a partial batch never waits). Returns the rows written; a row the UPDATE refuses (a
// constraint) counts as failed.
func writer(db *sql.DB, results <-chan result, commitEvery int, failed *atomic.Int64) int64 {
	update, err := db.Prepare(updateSQL)
	check(err)
	defer update.Close()
	var tx *sql.Tx
	var stmt *sql.Stmt
	pending, written := 0, int64(0)
	flush := func() {
		if tx != nil {
			check(tx.Commit())
			written += int64(pending)
			tx, stmt, pending = nil, nil, 0
		}
	}
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case r, ok := <-results:
			if !ok {
				flush()
				return written
			}
			if tx == nil {
				tx, err = db.Begin()
				check(err)
				stmt = tx.Stmt(update) // the same connection: the prepared statement is reused
			}
			if _, err := stmt.Exec(r.args...); err != nil {
				fmt.Fprintln(os.Stderr, "write failed:", err)
				failed.Add(1)
			} else {
				pending++
			}
			if pending >= commitEvery {
				flush()
			}
		case <-ticker.C:
			flush()
		}
	}
}
