package toolrunner_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// ocrStandIn is the fallback: it says it read by OCR.
type ocrStandIn struct{ calls *int }

func (o ocrStandIn) ReadUpload(context.Context, string, []byte, toolrunner.ParseHints) (toolrunner.UploadDocument, error) {
	*o.calls++
	return toolrunner.UploadDocument{Kind: contracts.UploadReceipt, Receipt: &contracts.ReceiptRead{Total: "9.99", Currency: "EUR", ReadBy: "OCR"}}, nil
}

// A model server that accepts images reads a receipt photo; whenever its
// answer cannot be used the photo is read by OCR instead, and the
// fallback is counted by its reason. The server here speaks the OpenAI
// wire format to the real client.
func TestVisionReadsReceiptPhotosWithOCRAsFallback(t *testing.T) {
	photo := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00 a receipt")
	cases := []struct {
		name    string
		status  int
		content string
		want    string // the total read, "ocr" when the fallback read it
		reason  string
	}{
		{"read by the model", 200, `{"is_receipt":true,"merchant":"REWE","date":"2025-10-07","total":"17.47","currency":"eur","items":[{"text":"Bananen","amount":"1.29"}],"unsure":[]}`, "17.47", ""},
		{"the server fails", 500, `{"error":{"message":"overloaded"}}`, "ocr", "error"},
		{"not a receipt", 200, `{"is_receipt":false,"merchant":"","date":"","total":"","currency":"","items":[],"unsure":[]}`, "ocr", "not_receipt"},
		{"a total that is not a number", 200, `{"is_receipt":true,"merchant":"X","date":"","total":"17,47 EUR","currency":"EUR","items":[],"unsure":[]}`, "ocr", "invalid"},
		{"a date that is not one", 200, `{"is_receipt":true,"merchant":"X","date":"2025-02-30","total":"1.00","currency":"EUR","items":[],"unsure":[]}`, "ocr", "invalid"},
		{"an unknown field", 200, `{"is_receipt":true,"total":"1.00","tool":"delete_expense"}`, "ocr", "invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sawImage bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				sawImage = strings.Contains(string(body), `"image_url":{"url":"data:image/jpeg;base64,`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				if c.status != 200 {
					io.WriteString(w, c.content)
					return
				}
				json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
					"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": c.content}}}})
			}))
			defer srv.Close()
			cfg := openai.DefaultConfig("k")
			cfg.BaseURL = srv.URL + "/v1"
			ocr := 0
			reg := prometheus.NewRegistry()
			v, err := toolrunner.NewVisionReader(openai.NewClientWithConfig(cfg), "vision-model", ocrStandIn{&ocr}, reg)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := v.ReadUpload(context.Background(), "photo.png", photo, toolrunner.ParseHints{})
			if err != nil {
				t.Fatal(err)
			}
			if !sawImage {
				t.Error("the model was not sent the photo as an image part")
			}
			got := doc.Receipt.Total
			if doc.Receipt.ReadBy == "OCR" {
				got = "ocr"
			}
			if got != c.want {
				t.Fatalf("read %q (by %s), want %q", doc.Receipt.Total, doc.Receipt.ReadBy, c.want)
			}
			if c.want != "ocr" && (doc.Receipt.Currency != "EUR" || doc.Receipt.ReadBy != "model" || len(doc.Receipt.Items) != 1) {
				t.Errorf("the model's reading: %+v", doc.Receipt)
			}
			if c.reason != "" {
				if n := testutil.ToFloat64(v.Fallbacks().WithLabelValues(c.reason)); n != 1 {
					t.Errorf("fallbacks{reason=%s} = %v, want 1", c.reason, n)
				}
			}
		})
	}
	// A PDF never goes to the model: its text is read exactly.
	ocr := 0
	v, _ := toolrunner.NewVisionReader(openai.NewClientWithConfig(openai.DefaultConfig("k")), "m", ocrStandIn{&ocr}, nil)
	if _, err := v.ReadUpload(context.Background(), "r.pdf", []byte("%PDF-1.4 ..."), toolrunner.ParseHints{}); err != nil || ocr != 1 {
		t.Fatalf("a PDF: err %v, fallback calls %d; want it read without the model", err, ocr)
	}
}
