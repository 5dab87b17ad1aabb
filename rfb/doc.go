// Package rfb reads the client's side of an RFB stream (RFC 6143, the
// protocol of a VM's graphical console) far enough to enforce view-only
// access: [ViewOnly] forwards what a viewer needs (the handshake, pixel
// format, encodings and update requests) and drops every message that
// would act on the VM (keys, pointer, clipboard, desktop resize, QEMU's
// extended keys), whole messages at a time, however the bytes arrive.
package rfb
