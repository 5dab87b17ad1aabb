// Package download is the program the import pod runs: `redfish-bridge
// import` ([RunImport]), one plain HTTP(S) GET of an image URL streamed
// into a file of the pod's PVC, under an address policy checked on every
// connection ([AddrPolicy], [PolicyClient]; redirects never downgrade to
// http), the slot's TLS trust and credentials ([ImportRequest.Client]),
// and the size limits ([Limits]: a larger image fails with a
// [*TooLargeError], one larger than the PVC holds is reported with its
// size, [*NeedRoomError], so the bridge re-creates the PVC at [ClaimSize]).
// The body is hashed (sha256) on another goroutine and written behind
// (writeback.go) as it streams; a compressed response is refused, never
// inflated.
//
// With a cache entry mounted (--cache-dir; cachefill.go) the pod
// revalidates the entry under an exclusive lock, downloads into it only
// when it is empty or the image changed, and copies from it; a failed
// shared download fails the imports waiting for it with a
// [*SharedDownloadError]. With --head-only (head.go) it sends only a HEAD
// and reports the server's [Validators]: the CDI image cache's check pod.
//
// The outcome is the pod's termination message ([TerminationMessage]):
// an [ImportResult] as JSON, or the error's text.
//
// This package's exported API is for three callers, and only them:
//
//   - cmd/redfish-bridge's `import` subcommand runs [RunImport];
//   - package media's reconciler builds an import pod's command line
//     with [ImportRequest.Args] and reads its outcome with
//     [ParseImportResult] (the argument format lives here only: Args and
//     [ParseImportArgs] are inverses); the Insert verbs validate image
//     URLs with [AddrPolicy.ValidateURL] and [AddrPolicy.ValidateResolved]
//     (an [*InvalidURLError]) and size PVCs with [ClaimSize];
//   - the simulator (harness/sim) plays the import pods and CDI's
//     importer with [ParseImportArgs] and [ImportRequest.Run]
//     (RoomBytes and Progress are for it) and reports with
//     [TerminationMessage].
//
// It imports nothing of the bridge's Kubernetes side: the pod has only
// its arguments and its mounted files.
package download
