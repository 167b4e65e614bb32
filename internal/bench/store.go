package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// StoreSample is what purser's /metrics says of its store at one moment:
// the purser_store_ series by name with their labels, as Prometheus's
// text format writes them.
type StoreSample struct {
	At     time.Time
	Series map[string]float64
}

// SampleStore reads the store's series from the /metrics of a purser.
func SampleStore(ctx context.Context, metricsURL string) (StoreSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return StoreSample{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return StoreSample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return StoreSample{}, fmt.Errorf("%s: %s", metricsURL, resp.Status)
	}
	s, err := parseStoreSeries(resp.Body)
	s.At = time.Now()
	return s, err
}

func parseStoreSeries(r io.Reader) (StoreSample, error) {
	s := StoreSample{Series: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "purser_store_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		s.Series[line[:i]] = v
	}
	return s, sc.Err()
}

// ReportStore writes what the store did between two samples: SQLite's
// writer's busy share, its transactions and commits and a write's average
// time; Postgres's pipelines, their statements and the ones run again
// statement by statement; and for every pool the statements waiting for a connection, on
// average, and how long each waited.
func ReportStore(w io.Writer, from, to StoreSample) {
	secs := to.At.Sub(from.At).Seconds()
	if secs <= 0 {
		return
	}
	d := func(name string) float64 { return to.Series[name] - from.Series[name] }
	if _, sqlite := to.Series["purser_store_writer_busy_seconds_total"]; sqlite {
		commits, txs := d("purser_store_writer_batch_transactions_count"), d("purser_store_writer_batch_transactions_sum")
		line := fmt.Sprintf("writer busy %.0f%% of the time; %.0f write transactions/s in %.0f commits/s",
			100*d("purser_store_writer_busy_seconds_total")/secs, txs/secs, commits/secs)
		if n := d("purser_store_write_seconds_count"); n > 0 {
			line += fmt.Sprintf("; a write %s from queued to committed, on average", ms(time.Duration(d("purser_store_write_seconds_sum")/n*float64(time.Second))))
		}
		fmt.Fprintf(w, "%-9s %s\n", "store", line)
	}
	if _, postgres := to.Series["purser_store_pipeline_reruns_total"]; postgres {
		pipes, stmts := d("purser_store_pipeline_statements_count"), d("purser_store_pipeline_statements_sum")
		line := fmt.Sprintf("%.0f statements/s in %.0f pipelines/s (round trips and commits)", stmts/secs, pipes/secs)
		if pipes > 0 {
			line += fmt.Sprintf(", %.1f statements each on average", stmts/pipes)
		}
		line += fmt.Sprintf("; %.0f run again statement by statement", d("purser_store_pipeline_reruns_total"))
		fmt.Fprintf(w, "%-9s %s\n", "store", line)
	}
	var pools []string
	for name := range to.Series {
		if rest, ok := strings.CutPrefix(name, `purser_store_connection_waits_total{pool="`); ok {
			pools = append(pools, strings.TrimSuffix(rest, `"}`))
		}
	}
	sort.Strings(pools)
	var waits []string
	for _, p := range pools {
		n := d(`purser_store_connection_waits_total{pool="` + p + `"}`)
		waited := d(`purser_store_connection_wait_seconds_total{pool="` + p + `"}`)
		if n == 0 {
			waits = append(waits, p+" none")
			continue
		}
		waits = append(waits, fmt.Sprintf("%s %.1f waiting at a time, %s each", p, waited/secs, ms(time.Duration(waited/n*float64(time.Second)))))
	}
	if len(waits) > 0 {
		fmt.Fprintf(w, "%-9s statements waiting for a connection: %s\n", "", strings.Join(waits, "; "))
	}
}
