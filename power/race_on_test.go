//go:build race

package power

// Under the race detector TestRace runs scaled down: -race slows the
// bridge, the checker and the simulator about 4x, and every cycle goes
// through KubeVirt's virt-controller, so the full 12 x 14 took 13 min on
// the 2-core machine. 6 VMs x 4 cycles still run every operation of a
// cycle concurrently on several VMs at once beside the outside writer (what
// the detector needs); the full size runs without -race (`make test` runs
// both).
const (
	defaultRaceVMs    = 6
	defaultRaceCycles = 4
)
