# The image deploy/k8s runs (ghcr.io/purser-ai/purser:<version>). Built by CI
# elsewhere; there is no Docker engine on the development machines.
#   docker build --build-arg VERSION=0.1.0 -t ghcr.io/purser-ai/purser:0.1.0 .
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOTOOLCHAIN=local GOEXPERIMENT=jsonv2 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X github.com/purser-ai/purser/internal/ops.version=${VERSION}" -o /purser ./cmd/purser

# The runtime reads scans: tesseract with the languages receipts and
# statements come in (English, German, French, Spanish, Dutch, Japanese,
# and orientation detection for pages scanned sideways) and poppler's
# pdftoppm, which renders scanned PDF pages for it. Every service runs
# this one image; only the toolrunner calls them.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates poppler-utils \
      tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa \
      tesseract-ocr-nld tesseract-ocr-jpn tesseract-ocr-osd \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
COPY --from=build /purser /purser
# nonroot: uid 65532, which the manifests' securityContext expects.
USER 65532:65532
ENTRYPOINT ["/purser"]
