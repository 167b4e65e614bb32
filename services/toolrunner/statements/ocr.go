package statements

import (
	"bytes"
)

func isImage(data []byte) bool {
	return bytes.HasPrefix(data, []byte("\x89PNG")) || bytes.HasPrefix(data, []byte("\xff\xd8\xff")) ||
		bytes.HasPrefix(data, []byte("II*\x00")) || bytes.HasPrefix(data, []byte("MM\x00*"))
}

// ocrMissing is what a person reads when a scan needs OCR and the
// machine has no tesseract.
const ocrMissing = "a scanned statement (an image without text): reading it needs OCR, and the tesseract program is not installed (apt-get install tesseract-ocr)"

func parseImage(name string, data []byte, opts Options) (Result, error) {
	return Result{}, unreadable(ocrMissing)
}

func ocrPDF(data []byte, pages int, opts Options) (Result, error) {
	return Result{}, unreadable(ocrMissing)
}
