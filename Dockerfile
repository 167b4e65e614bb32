# The image deploy/k8s runs. Built by CI elsewhere; there is no Docker engine on
# the development machines.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /purser ./cmd/purser

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /purser /purser
ENTRYPOINT ["/purser"]
