# syntax=docker/dockerfile:1
# redfish-bridge: one static binary on distroless, running as nonroot
# (65532). The same image runs the bridge (`serve`, the default) and the ISO
# import pods (`import`).

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/redfish-bridge ./cmd/redfish-bridge

# noVNC for the graphical console (/console/), from Debian's package: only
# its core/ and vendor/ (ES modules the page imports) reach the image.
FROM debian:bookworm-slim AS novnc
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends novnc

FROM gcr.io/distroless/static:nonroot
COPY --from=novnc /usr/share/novnc/core /usr/share/novnc/core
COPY --from=novnc /usr/share/novnc/vendor /usr/share/novnc/vendor
# On PATH: import pods run `redfish-bridge import ...` from this same image.
COPY --from=build /out/redfish-bridge /usr/local/bin/redfish-bridge
USER 65532:65532
EXPOSE 8443 9090
ENTRYPOINT ["/usr/local/bin/redfish-bridge"]
CMD ["serve"]
