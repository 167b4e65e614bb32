package prune

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Kind is a kind of what people own that an operator may give a
// retention: past it, the pruner deletes it.
type Kind string

// The kinds with a retention. The ledger (expenses, transactions and the
// change log an undo reads) has none: it is what people keep purser for.
const (
	// Documents are imported statements and receipts, with their files;
	// what was imported from them stays in the ledger.
	Documents Kind = "documents"
	// Messages are conversation frames and inbox notifications.
	Messages Kind = "messages"
	// Audit is the log of tool calls made for people.
	Audit Kind = "audit"
)

// Kinds are every kind, in the order errors name them.
func Kinds() []Kind { return []Kind{Documents, Messages, Audit} }

// Retention is how long each kind is kept: by default, and per tenant.
// A missing or zero duration keeps that kind for good.
type Retention struct {
	Default map[Kind]time.Duration
	// Tenants override Default, kind by kind; an explicit zero ("off")
	// keeps a kind for good for that tenant whatever the default.
	Tenants map[string]map[Kind]time.Duration
}

// For is how long tenant's kind is kept; 0 is for good.
func (r Retention) For(tenant string, k Kind) time.Duration {
	if t, ok := r.Tenants[tenant]; ok {
		if d, ok := t[k]; ok {
			return d
		}
	}
	return r.Default[k]
}

// Any reports whether some tenant's kind is ever pruned.
func (r Retention) Any(k Kind) bool {
	if r.Default[k] > 0 {
		return true
	}
	for _, t := range r.Tenants {
		if t[k] > 0 {
			return true
		}
	}
	return false
}

// ParseRetention reads the default retention (PURSER_RETENTION, such as
// "documents:365,messages:90") and the tenants' (PURSER_TENANT_RETENTION,
// such as "acme=documents:365,messages:90;globex=messages:off"). A value
// is a whole number of days from 1 to 36500, or "off" for good. Empty
// strings keep everything.
func ParseRetention(defaults, tenants string) (Retention, error) {
	r := Retention{Tenants: map[string]map[Kind]time.Duration{}}
	var errs []error
	d, err := parseKinds(defaults)
	if err != nil {
		errs = append(errs, fmt.Errorf("PURSER_RETENTION: %w", err))
	}
	r.Default = d
	for _, entry := range strings.Split(tenants, ";") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		tenant, kinds, ok := strings.Cut(entry, "=")
		tenant = strings.TrimSpace(tenant)
		switch {
		case !ok || tenant == "":
			errs = append(errs, fmt.Errorf("PURSER_TENANT_RETENTION: %q is not tenant=kind:days, such as acme=messages:90", entry))
			continue
		case !contracts.ValidID(tenant):
			errs = append(errs, fmt.Errorf("PURSER_TENANT_RETENTION: %q is not a tenant id (letters, digits, - and _)", tenant))
			continue
		}
		if _, dup := r.Tenants[tenant]; dup {
			errs = append(errs, fmt.Errorf("PURSER_TENANT_RETENTION: tenant %q is given twice", tenant))
			continue
		}
		k, err := parseKinds(kinds)
		if err != nil {
			errs = append(errs, fmt.Errorf("PURSER_TENANT_RETENTION: %s: %w", tenant, err))
			continue
		}
		r.Tenants[tenant] = k
	}
	return r, errors.Join(errs...)
}

// parseKinds reads "documents:365,messages:off".
func parseKinds(s string) (map[Kind]time.Duration, error) {
	out := map[Kind]time.Duration{}
	for _, entry := range strings.Split(s, ",") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		name, value, ok := strings.Cut(entry, ":")
		k := Kind(strings.ToLower(strings.TrimSpace(name)))
		if !ok {
			return nil, fmt.Errorf("%q is not kind:days, such as messages:90", entry)
		}
		if !slices.Contains(Kinds(), k) {
			return nil, fmt.Errorf("unknown kind %q (kinds: documents, messages, audit)", name)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s is given twice", k)
		}
		value = strings.TrimSpace(value)
		if strings.EqualFold(value, "off") {
			out[k] = 0
			continue
		}
		days, err := strconv.Atoi(value)
		if err != nil || days < 1 || days > 36500 {
			return nil, fmt.Errorf("%s:%s: want a number of days from 1 to 36500, or off", k, value)
		}
		out[k] = time.Duration(days) * 24 * time.Hour
	}
	return out, nil
}

// String writes r back in the form ParseRetention reads, tenants in
// order: what start-up logs.
func (r Retention) String() string {
	kinds := func(m map[Kind]time.Duration) string {
		var parts []string
		for _, k := range Kinds() {
			if d, ok := m[k]; ok {
				v := "off"
				if d > 0 {
					v = strconv.Itoa(int(d / (24 * time.Hour)))
				}
				parts = append(parts, string(k)+":"+v)
			}
		}
		return strings.Join(parts, ",")
	}
	out := kinds(r.Default)
	if out == "" {
		out = "everything kept"
	}
	for _, t := range slices.Sorted(maps.Keys(r.Tenants)) {
		out += "; " + t + "=" + kinds(r.Tenants[t])
	}
	return out
}
