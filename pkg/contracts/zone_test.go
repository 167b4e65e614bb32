package contracts

import (
	"testing"
	"time"
)

// A zone is read from the system's database once and then given again;
// a name that is no zone is refused each time and never kept.
func TestLoadZoneKeepsOnlyZonesThatLoad(t *testing.T) {
	a, err := LoadZone("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadZone("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("Europe/Paris was read from the database twice")
	}
	summer := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	if _, off := summer.In(a).Zone(); off != 2*3600 {
		t.Errorf("Europe/Paris in July is UTC%+d, want +7200", off)
	}
	for range 2 {
		if _, err := LoadZone("Not/AZone"); err == nil {
			t.Fatal("Not/AZone loaded")
		}
	}
	if _, kept := zones.Load("Not/AZone"); kept {
		t.Error("a name that is no zone was kept")
	}
}
