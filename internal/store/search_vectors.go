package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// SearchText is one indexed thing still without a vector of the current
// embeddings model: the text to embed and the version it was made from.
type SearchText struct {
	ID        int64
	Text      string
	UpdatedAt time.Time
}

// Unembedded returns up to limit indexed things, of every person, whose
// vector is missing or of another model than model, oldest first.
func (s *Store) Unembedded(ctx context.Context, model string, limit int) ([]SearchText, error) {
	var out []SearchText
	err := s.readRows(ctx, `SELECT id, title, snippet, updated_at FROM search_docs WHERE embedding_model <> ? ORDER BY id LIMIT ?`,
		[]any{model, limit}, func(rows rowScanner) error {
			out = out[:0]
			for rows.Next() {
				var t SearchText
				var title, snippet string
				if err := rows.Scan(&t.ID, &title, &snippet, timeCol{&t.UpdatedAt}); err != nil {
					return err
				}
				t.Text = strings.TrimSuffix(title+". "+snippet, ". ")
				out = append(out, t)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("unembedded: %w", err)
	}
	return out, nil
}

// PutEmbeddings stores the vectors of texts (vecs[i] of texts[i]), made
// by model, each scaled to unit length. A thing whose words changed since
// Unembedded read them keeps no vector: the next round embeds its new
// words. It returns how many were stored.
func (s *Store) PutEmbeddings(ctx context.Context, model string, texts []SearchText, vecs [][]float32) (int, error) {
	if len(texts) != len(vecs) {
		return 0, errors.New("put embeddings: one vector per text")
	}
	n := 0
	err := s.InTx(ctx, func(tx *Store) error {
		n = 0
		for i, t := range texts {
			c, err := tx.exec(ctx, `UPDATE search_docs SET embedding = ?, embedding_model = ? WHERE id = ? AND updated_at = ?`,
				encodeVector(vecs[i]), model, t.ID, tx.d.ts(t.UpdatedAt))
			if err != nil {
				return err
			}
			n += int(c)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("put embeddings: %w", err)
	}
	return n, nil
}

// SearchVectors returns the person's things nearest to vec by cosine
// similarity among those embedded by model, at least minSimilarity, best
// first (Rank is minus the similarity). It compares every vector of the person in turn: fine for
// the thousands of records one person keeps; the index holds no
// approximate-nearest-neighbour structure.
func (s *Store) SearchVectors(ctx context.Context, f SearchFilter, model string, vec []float32, minSimilarity float64) ([]SearchHit, error) {
	if f.TenantID == "" || f.UserID == "" {
		return nil, errors.New("search vectors: a tenant and a user are required")
	}
	q := unit(vec)
	if q == nil {
		return nil, nil
	}
	type scored struct {
		id  int64
		sim float64
	}
	var best []scored
	where, args := f.where()
	limit := f.limit()
	err := s.readRows(ctx, `SELECT d.id, d.embedding FROM search_docs d WHERE d.embedding_model = ?`+where,
		append([]any{model}, args...), func(rows rowScanner) error {
			best = best[:0]
			for rows.Next() {
				var id int64
				var raw []byte
				if err := rows.Scan(&id, &raw); err != nil {
					return err
				}
				sim, ok := dotEncoded(q, raw)
				if !ok || sim < minSimilarity {
					continue
				}
				best = append(best, scored{id, sim})
				if len(best) >= 4*limit {
					// Keep the list short: sort, cut to the best limit.
					slices.SortFunc(best, func(a, b scored) int { return cmp.Compare(b.sim, a.sim) })
					best = best[:limit]
				}
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	slices.SortFunc(best, func(a, b scored) int { return cmp.Compare(b.sim, a.sim) })
	best = best[:min(len(best), limit)]
	if len(best) == 0 {
		return nil, nil
	}
	ids := make([]any, len(best))
	for i, b := range best {
		ids[i] = b.id
	}
	hits := make([]SearchHit, 0, len(best))
	err = s.readRows(ctx, `SELECT `+searchHitCols+`, d.id FROM search_docs d WHERE d.tenant_id = ? AND d.user_id = ? AND d.id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`,
		append([]any{f.TenantID, f.UserID}, ids...), func(rows rowScanner) error {
			hits = hits[:0]
			for rows.Next() {
				var h SearchHit
				var id int64
				if err := rows.Scan(&h.Kind, &h.Ref, &h.Parent, &h.Title, &h.Snippet, &h.Date, &h.AmountMinor, &h.Currency, &id); err != nil {
					return err
				}
				for _, b := range best {
					if b.id == id {
						h.Rank = -b.sim
					}
				}
				hits = append(hits, h)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	slices.SortStableFunc(hits, func(a, b SearchHit) int { return cmp.Compare(a.Rank, b.Rank) })
	return hits, nil
}

// encodeVector is v scaled to unit length, as little-endian float32s.
func encodeVector(v []float32) []byte {
	u := unit(v)
	out := make([]byte, 4*len(u))
	for i, x := range u {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// unit is v scaled to length 1, nil for a zero or empty vector.
func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil
	}
	n := float32(math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// dotEncoded is the dot product of q and an encoded vector; ok is false
// when their lengths differ (a vector of another dimension).
func dotEncoded(q []float32, raw []byte) (float64, bool) {
	if len(raw) != 4*len(q) {
		return 0, false
	}
	var sum float32
	for i, x := range q {
		sum += x * math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return float64(sum), true
}
