package system

import "strings"

// HTTPBootSlot is the slot that holds the image of Boot.HttpBootUri. It
// goes through the same import state machine as virtual media but is not
// virtual media: it is never listed under VirtualMedia.
const HTTPBootSlot = "httpboot"

// usbPrefix starts the id of every USB stick slot ("usb0").
const usbPrefix = "usb"

// SlotKind is what a slot emulates, decided by its id.
type SlotKind int

// Slot kinds.
const (
	// SlotCD is a virtual CD/DVD: a CD-ROM disk (every id but the others).
	SlotCD SlotKind = iota
	// SlotUSB is a virtual USB stick: a disk on bus usb (ids "usb...").
	SlotUSB
	// SlotHTTPBoot holds the Boot.HttpBootUri image: a CD-ROM disk
	// ([HTTPBootSlot]).
	SlotHTTPBoot
)

// KindOf returns the kind of slot id.
func KindOf(slot string) SlotKind {
	switch {
	case slot == HTTPBootSlot:
		return SlotHTTPBoot
	case strings.HasPrefix(slot, usbPrefix):
		return SlotUSB
	}
	return SlotCD
}

// CDROM reports whether the slot's disk is a CD-ROM.
func (k SlotKind) CDROM() bool { return k != SlotUSB }

// MediaTypes is VirtualMedia.MediaTypes of the kind.
func (k SlotKind) MediaTypes() []string {
	if k == SlotUSB {
		return []string{"USBStick"}
	}
	return []string{"CD", "DVD"}
}
