package toolrunner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// KVLimiter is a fixed-window rate limit shared by every replica: one
// counter per key and minute in a JetStream key-value bucket, incremented
// with compare-and-set so that concurrent callers never both take the last
// slot.
type KVLimiter struct {
	kv jetstream.KeyValue
}

// RateLimitBucket is the KV bucket the limiter keeps its counters in.
const RateLimitBucket = "purser_ratelimit"

// NewKVLimiter creates (or binds to) the counter bucket, kept on replicas
// NATS nodes as the streams are (PURSER_STREAM_REPLICAS): on fewer, losing
// the node that holds it fails every rate-limited tool call until the node
// is back. Counters expire after two windows.
func NewKVLimiter(ctx context.Context, js jetstream.JetStream, replicas int) (*KVLimiter, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: RateLimitBucket, TTL: 2 * time.Minute, History: 1,
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1)})
	if err != nil {
		return nil, fmt.Errorf("rate limit bucket: %w", err)
	}
	return &KVLimiter{kv: kv}, nil
}

// Allow counts one call for key in the current minute.
func (l *KVLimiter) Allow(ctx context.Context, key string, perMinute int, now time.Time) (bool, time.Duration, error) {
	window := now.Unix() / 60
	k := key + "." + strconv.FormatInt(window, 10)
	retry := time.Unix((window+1)*60, 0).Sub(now)
	for range 50 {
		entry, err := l.kv.Get(ctx, k)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			if _, err := l.kv.Create(ctx, k, []byte("1")); err == nil {
				return true, 0, nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return false, 0, err
			}
			continue // someone else created it first
		case err != nil:
			return false, 0, err
		}
		n, _ := strconv.Atoi(string(entry.Value()))
		if n >= perMinute {
			return false, retry, nil
		}
		if _, err := l.kv.Update(ctx, k, []byte(strconv.Itoa(n+1)), entry.Revision()); err == nil {
			return true, 0, nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return false, 0, err
		}
	}
	return false, 0, errors.New("rate limit counter is too contended")
}
