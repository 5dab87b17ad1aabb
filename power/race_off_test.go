//go:build !race

package power

// Without the race detector TestRace runs at full size (race_on_test.go:
// the size under -race).
const (
	defaultRaceVMs    = 12
	defaultRaceCycles = 14
)
