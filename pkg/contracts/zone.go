package contracts

import (
	"sync"
	"time"
)

// zones holds the time zones LoadZone has found, by name.
var zones sync.Map

// LoadZone is time.LoadLocation with the zones it found kept: that reads
// and parses the zone's file from the system's database on every call,
// and a turn asked for its user's zone several times (validating the
// turn, the orchestrator, the tool runner): 52% of decoding a turn with
// a zone (BenchmarkDecode). Only names that load are kept, so the map
// holds at most the database's few hundred zones whatever is asked.
func LoadZone(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, loc)
	return loc, nil
}
