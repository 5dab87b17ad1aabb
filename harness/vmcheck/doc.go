// Package vmcheck reads what the end-to-end and reliability tests check on
// a VirtualMachine, its VirtualMachineInstance and the media objects: the
// disks in the order the firmware tries them, the volumes and their claims,
// the media slot the bridge recorded, the import pods and PVC left behind,
// and the checksum of an imported image. It only reads; callers decide what
// is a failure.
package vmcheck
