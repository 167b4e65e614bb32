package ops

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// version is the release, set at build time (the Dockerfile does):
// -ldflags "-X github.com/purser-ai/purser/internal/ops.version=0.1.0".
// It is never changed at run time.
var version string

// BuildInfo is the gauge purser_build_info, always 1, whose labels say
// which build is running: the release (or else the module version: a tag,
// or a pseudo-version from the commit), the commit, and the Go version. Dashboards join on it
// to show a rollout.
func BuildInfo() prometheus.Collector {
	v, revision := "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	if version != "" {
		v = version
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "purser_build_info",
		Help:        "The running build: version, commit and Go version as labels; always 1.",
		ConstLabels: prometheus.Labels{"version": v, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}
