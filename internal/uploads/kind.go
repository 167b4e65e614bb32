package uploads

import (
	"bytes"
	"errors"
	"regexp"
	"unicode/utf8"
)

// Kinds of document purser reads, by content.
const (
	KindText  = "text"  // CSV, OFX/QFX, camt.053, MT940, QIF
	KindPDF   = "pdf"   // statements and receipts, with a text layer or scanned
	KindImage = "image" // photos and scans: JPEG, PNG, TIFF, GIF, WebP
)

// Accepted names what purser reads, for the error that refuses the rest.
const Accepted = "bank statements (CSV, OFX/QFX, camt.053 XML, MT940, QIF or PDF) and receipts (a PDF or a photo: JPEG, PNG, TIFF, GIF or WebP)"

// ErrUnsupported is returned by Sniff for content purser does not read.
var ErrUnsupported = errors.New("not a document purser reads")

// Sniff says what data is from its content alone; the file's name and
// the client's media type are never trusted (a program named
// statement.csv is a program). The media type returned is for keeping
// with the file.
func Sniff(data []byte) (kind, mediaType string, err error) {
	head := data[:min(len(data), 4096)]
	switch {
	case len(data) == 0:
		return "", "", ErrUnsupported
	case bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")):
		return KindPDF, "application/pdf", nil
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return KindImage, "image/jpeg", nil
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return KindImage, "image/png", nil
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return KindImage, "image/tiff", nil
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return KindImage, "image/gif", nil
	case len(data) > 12 && bytes.Equal(data[:4], []byte("RIFF")) && bytes.Equal(data[8:12], []byte("WEBP")):
		return KindImage, "image/webp", nil
	case bytes.HasPrefix(head, []byte("#!")):
		return "", "", ErrUnsupported // a script
	case isText(head):
		return KindText, "text/plain", nil
	}
	return "", "", ErrUnsupported
}

// isText says the start of a file is text a statement reader decodes:
// UTF-16 with its byte-order mark, or bytes with no NUL and few control
// characters (UTF-8, or a single-byte code page such as Latin-1).
// Executables, archives (including spreadsheets, which are zip files) and
// other binaries hold NULs or many control bytes early on.
func isText(head []byte) bool {
	if bytes.HasPrefix(head, []byte("\xff\xfe")) || bytes.HasPrefix(head, []byte("\xfe\xff")) {
		return len(head) >= 4
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	control := 0
	for _, c := range head {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1a {
			control++
		}
	}
	if control > len(head)/100 {
		return false
	}
	if utf8.Valid(head) {
		return true
	}
	// A single-byte code page: letters above 0x7f are a minority.
	high := 0
	for _, c := range head {
		if c >= 0x80 {
			high++
		}
	}
	return high <= len(head)/4
}

// pageRe finds page objects in a PDF whose objects are not compressed.
var pageRe = regexp.MustCompile(`/Type\s*/Page[^s]`)

// PDFPages counts the pages of a PDF cheaply, before any parser runs: the
// page objects it can see (0 when they are in compressed object streams;
// the reader bounds those pages itself).
func PDFPages(data []byte) int { return len(pageRe.FindAllIndex(data, -1)) }
