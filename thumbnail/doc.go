// Package thumbnail serves the Systems page's screenshot thumbnails: the
// PNG of a running VM's screen, read from KubeVirt's vnc/screenshot
// subresource (package virtapi), checked to be a PNG of bounded size, and
// cached briefly per System so that a page of Systems polling its
// thumbnails costs virt-api at most one screenshot per System per [TTL].
package thumbnail
