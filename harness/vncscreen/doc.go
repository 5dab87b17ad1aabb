// Package vncscreen is the simulated VM's screen: what QEMU's VNC server
// is to virt-handler in a real cluster. A [Screen] holds a VM's name and
// boot state, draws them into its framebuffer ([Render]) and records the
// keys, pointer buttons and clipboard text it receives, so a test can ask
// which keys a VM got ([Screen.Keys], [Screen.WaitKey]).
//
// [Screen.Serve] speaks RFB 3.8 (RFC 6143) with security type None, as
// QEMU's VNC socket does to virt-handler and virt-handler passes through
// to virt-api's `vnc` subresource: raw encoding, any true-colour pixel
// format the client sets. [Dial] is the other side, a small RFB client the
// tests use to read the framebuffer and type keys.
//
// It belongs to the harness: the bridge never imports it.
package vncscreen
