package toolrunner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/internal/uploads"
	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// VisionReader reads photos of receipts with a model server that accepts
// images (the OpenAI chat API with an image part), and falls back to its
// Fallback reader (OCR in the sandbox) whenever the model fails, is slow,
// says the photo is not a receipt, or answers something that does not
// check out. PDFs and text files go to the fallback at once: their text
// is read exactly without a model.
type VisionReader struct {
	Client   *openai.Client
	Model    string
	Fallback UploadReader
	// Timeout bounds the model's answer; default 45 s.
	Timeout   time.Duration
	fallbacks *prometheus.CounterVec
}

// NewVisionReader returns a VisionReader whose fallbacks are counted in
// purser_receipt_vision_fallbacks_total{reason}.
func NewVisionReader(client *openai.Client, model string, fallback UploadReader, reg prometheus.Registerer) (*VisionReader, error) {
	v := &VisionReader{Client: client, Model: model, Fallback: fallback,
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_receipt_vision_fallbacks_total",
			Help: "Receipt photos read by OCR because the model could not: error, timeout, not_receipt, invalid."}, []string{"reason"})}
	if reg != nil {
		if err := reg.Register(v.fallbacks); err != nil {
			return nil, err
		}
	}
	return v, nil
}

const visionPrompt = `You read one photo of a purchase receipt. Answer with one JSON object and nothing else:
{"is_receipt": true or false, "merchant": "shop name as printed, brand first", "date": "YYYY-MM-DD or empty",
 "total": "the grand total the customer pays, digits with a '.' for decimals as printed, or empty",
 "currency": "ISO 4217 code from the printed symbol or code, or empty",
 "items": [{"text": "line item as printed", "amount": "its amount"}], "unsure": ["what a person should check"]}
The total is never a subtotal, the tax, the cash given, the change, a cash-back or a loyalty sum. A handwritten tip
added to a printed total makes the handwritten final total the total. Leave a field empty rather than guess.`

// visionAnswer is what the model is asked to answer.
type visionAnswer struct {
	IsReceipt bool                    `json:"is_receipt"`
	Merchant  string                  `json:"merchant"`
	Date      string                  `json:"date"`
	Total     string                  `json:"total"`
	Currency  string                  `json:"currency"`
	Items     []contracts.ReceiptItem `json:"items"`
	Unsure    []string                `json:"unsure"`
}

var (
	visionTotal = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,3})?$`)
	visionDate  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// ReadUpload implements UploadReader.
func (v *VisionReader) ReadUpload(ctx context.Context, name string, data []byte, hints ParseHints) (UploadDocument, error) {
	kind, mediaType, err := uploads.Sniff(data)
	if err != nil || kind != uploads.KindImage || mediaType == "image/tiff" {
		return v.Fallback.ReadUpload(ctx, name, data, hints)
	}
	r, reason := v.ask(ctx, mediaType, data)
	if reason != "" {
		if v.fallbacks != nil {
			v.fallbacks.WithLabelValues(reason).Inc()
		}
		return v.Fallback.ReadUpload(ctx, name, data, hints)
	}
	return UploadDocument{Kind: contracts.UploadReceipt, Receipt: r}, nil
}

// ask has the model read the photo; reason says why its answer is not
// used, empty when it is.
func (v *VisionReader) ask(ctx context.Context, mediaType string, data []byte) (*contracts.ReceiptRead, string) {
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = 45 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := v.Client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:          v.Model,
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject},
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: visionPrompt},
			{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{
				{Type: openai.ChatMessagePartTypeText, Text: "Read this receipt."},
				{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{
					URL: "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data), Detail: openai.ImageURLDetailHigh}},
			}},
		},
	})
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, "timeout"
	case err != nil || len(resp.Choices) == 0:
		return nil, "error"
	}
	var a visionAnswer
	dec := json.NewDecoder(strings.NewReader(resp.Choices[0].Message.Content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, "invalid"
	}
	if !a.IsReceipt {
		return nil, "not_receipt"
	}
	r, ok := a.checked()
	if !ok {
		return nil, "invalid"
	}
	return r, ""
}

// checked is the model's answer as a receipt reading, when every field it
// gave is well formed: a total it cannot write plainly, a date that is
// not one, or a currency that is not ISO 4217 sends the photo to OCR.
func (a visionAnswer) checked() (*contracts.ReceiptRead, bool) {
	r := &contracts.ReceiptRead{Merchant: wording.Shorten(contracts.PlainText(a.Merchant), 200), ReadBy: "model"}
	if a.Total != "" && !visionTotal.MatchString(a.Total) {
		return nil, false
	}
	if a.Date != "" {
		if _, err := time.Parse(time.DateOnly, a.Date); err != nil || !visionDate.MatchString(a.Date) {
			return nil, false
		}
	}
	if a.Currency = strings.ToUpper(strings.TrimSpace(a.Currency)); a.Currency != "" && !contracts.ValidCurrency(a.Currency) {
		return nil, false
	}
	r.Date, r.Total, r.Currency = a.Date, a.Total, a.Currency
	for i, it := range a.Items {
		if i == 200 {
			break
		}
		r.Items = append(r.Items, contracts.ReceiptItem{Text: wording.Shorten(contracts.PlainText(it.Text), 200), Amount: wording.Shorten(contracts.PlainText(it.Amount), 20)})
	}
	for i, u := range a.Unsure {
		if i == 10 {
			break
		}
		if u = wording.Shorten(contracts.PlainText(u), 200); u != "" {
			r.Unsure = append(r.Unsure, u)
		}
	}
	if r.Total == "" {
		r.Unsure = append(r.Unsure, "no total found")
	}
	if r.Date == "" {
		r.Unsure = append(r.Unsure, "no date found")
	}
	return r, true
}

// Fallbacks is the counter of photos read by OCR instead, by reason.
func (v *VisionReader) Fallbacks() *prometheus.CounterVec { return v.fallbacks }
