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

# nonroot: uid 65532, which the manifests' securityContext expects.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /purser /purser
USER 65532:65532
ENTRYPOINT ["/purser"]
