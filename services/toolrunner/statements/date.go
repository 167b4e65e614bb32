package statements

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dateOrder is how a column writes dates.
type dateOrder int

const (
	ymd dateOrder = iota + 1 // 2014-01-22, 2014/01/22, 20140122, 7 Nov 2013
	dmy                      // 22.01.2014, 22/01/2014
	mdy                      // 01/22/2014
)

func (o dateOrder) String() string {
	switch o {
	case dmy:
		return "day/month"
	case mdy:
		return "month/day"
	case ymd:
		return "year-month-day"
	}
	return ""
}

// ParseDateOrder reads a caller's default ("dmy", "mdy", or a locale such
// as "en-US"); 0 when it says nothing.
func ParseDateOrder(s string) dateOrder {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "dmy", "day/month", "dd/mm":
		return dmy
	case "mdy", "month/day", "mm/dd":
		return mdy
	case "":
		return 0
	}
	// Locales that write the month first.
	for _, l := range []string{"en-us", "en_us", "us", "en-ph", "en_ph", "en-ca", "en_ca", "fil"} {
		if s == l || strings.HasPrefix(s, l+".") {
			return mdy
		}
	}
	return dmy
}

var (
	reCompact = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})(?:\d{6}(?:\.\d+)?)?(?:\[[^\]]*\])?$`) // 20091224 or 20091224120000[0:GMT]
	reYMD     = regexp.MustCompile(`^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ].*)?$`)
	reXYZ     = regexp.MustCompile(`^(\d{1,2})([-/.])(\d{1,2})[-/.](\d{1,4})(?:[T ,].*)?$`)
	// 07 Nov 2013, 7-Nov-13, 10-Nov-9, 07Nov13, 7 November 2013, 07 Nov
	reDMonY = regexp.MustCompile(`^(\d{1,2})[\s\-./]*([A-Za-zéèûäöüå]{3,10})\.?(?:[\s\-./,]*(\d{1,4}))?(?:[T ].*)?$`)
	// Nov 7, 2013, November 07 2013, Nov-07-2013
	reMonDY = regexp.MustCompile(`^([A-Za-zéèûäöüå]{3,10})\.?[\s\-./]*(\d{1,2})(?:st|nd|rd|th)?(?:[\s\-./,]+(\d{4}))?$`)
)

var monthNames = map[string]int{}

func init() {
	for i, names := range [][]string{
		{"jan", "january", "janv", "janvier", "januar", "ene", "enero", "gen", "gennaio", "januari", "jänner"},
		{"feb", "february", "févr", "fevr", "février", "februar", "febrero", "febbraio", "februari"},
		{"mar", "march", "mars", "märz", "marz", "marzo", "maart", "mrt"},
		{"apr", "april", "avr", "avril", "abr", "abril", "aprile"},
		{"may", "mai", "mayo", "maggio", "mei", "maj"},
		{"jun", "june", "juin", "juni", "junio", "giugno"},
		{"jul", "july", "juil", "juillet", "juli", "julio", "luglio"},
		{"aug", "august", "août", "aout", "ago", "agosto", "augustus", "aug."},
		{"sep", "sept", "september", "septembre", "setiembre", "septiembre", "settembre", "set"},
		{"oct", "october", "octobre", "okt", "oktober", "octubre", "ottobre", "out"},
		{"nov", "november", "novembre", "noviembre"},
		{"dec", "december", "décembre", "decembre", "dez", "dezember", "dic", "diciembre", "dicembre"},
	} {
		for _, n := range names {
			monthNames[n] = i + 1
		}
	}
}

func monthOf(s string) int { return monthNames[strings.ToLower(s)] }

// dateCell is a date as written: a year and two fields whose order may
// still be open.
type dateCell struct {
	y, a, b int
	fixed   dateOrder // ymd when the form settles it (a is the month); 0 when a/b order is open
	sep     string
	noYear  bool // "07 Nov": the year comes from the statement
}

// fullYear reads a 1-, 2- or 4-digit year.
func fullYear(s string) (int, bool) {
	y, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	switch len(s) {
	case 1, 2:
		if y < 70 {
			return 2000 + y, true
		}
		return 1900 + y, true
	case 4:
		return y, true
	}
	return 0, false
}

func splitDate(s string) (dateCell, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 5 || len(s) > 40 {
		return dateCell{}, false
	}
	if m := reCompact.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		return dateCell{y: y, a: mo, b: d, fixed: ymd}, validDate(y, mo, d)
	}
	if m := reYMD.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		return dateCell{y: y, a: mo, b: d, fixed: ymd}, validDate(y, mo, d)
	}
	if m := reXYZ.FindStringSubmatch(s); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[3])
		y, ok := fullYear(m[4])
		if !ok || len(m[4]) == 3 {
			return dateCell{}, false
		}
		ok = (a >= 1 && a <= 31 && b >= 1 && b <= 12) || (a >= 1 && a <= 12 && b >= 1 && b <= 31)
		return dateCell{y: y, a: a, b: b, sep: m[2]}, ok && y >= 1970 && y <= 2100
	}
	if m := reDMonY.FindStringSubmatch(s); m != nil {
		mo := monthOf(m[2])
		d, _ := strconv.Atoi(m[1])
		c := dateCell{a: mo, b: d, fixed: ymd}
		if m[3] == "" {
			c.noYear, c.y = true, 2000
			return c, mo > 0 && validDate(2000, mo, d) // 2000 was a leap year
		}
		y, ok := fullYear(m[3])
		c.y = y
		return c, ok && mo > 0 && validDate(y, mo, d)
	}
	if m := reMonDY.FindStringSubmatch(s); m != nil {
		mo := monthOf(m[1])
		d, _ := strconv.Atoi(m[2])
		c := dateCell{a: mo, b: d, fixed: ymd}
		if m[3] == "" {
			c.noYear, c.y = true, 2000
			return c, mo > 0 && validDate(2000, mo, d)
		}
		c.y, _ = strconv.Atoi(m[3])
		return c, mo > 0 && validDate(c.y, mo, d)
	}
	return dateCell{}, false
}

func validDate(y, m, d int) bool {
	if y < 1970 || y > 2100 || m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// orderOf decides day/month order from all of a column's cells: a field
// over 12 anywhere settles it. Otherwise the caller's default applies (the
// user's locale or what is known of the account), then the separator's
// custom ("." is day first). open reports that nothing in the file
// settled it.
func orderOf(cells []dateCell, def dateOrder) (order dateOrder, open bool) {
	dayFirst, monthFirst, allFixed := false, false, len(cells) > 0
	for _, c := range cells {
		if c.fixed == ymd {
			continue
		}
		allFixed = false
		if c.a > 12 {
			dayFirst = true
		}
		if c.b > 12 {
			monthFirst = true
		}
	}
	switch {
	case allFixed:
		return ymd, false
	case dayFirst && !monthFirst:
		return dmy, false
	case monthFirst && !dayFirst:
		return mdy, false
	case dayFirst && monthFirst:
		return 0, true // inconsistent column
	}
	if def == dmy || def == mdy {
		return def, true
	}
	for _, c := range cells {
		if c.fixed != ymd && c.sep == "." {
			return dmy, true
		}
	}
	return dmy, true
}

func (c dateCell) format(o dateOrder) (string, bool) {
	y, m, d := c.y, c.a, c.b
	if c.fixed != ymd && o == dmy {
		m, d = c.b, c.a
	}
	if !validDate(y, m, d) {
		return "", false
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), true
}

// seriesOrder decides day/month order, when no date settles it, by what
// the dates would make of the statement under each reading: its dates are
// close together and mostly in order (oldest or newest first). A reading
// wins when it puts the dates in at most half the days of the other (and
// at least a week fewer), or, over a similar span, keeps them in order
// where the other does not. It returns 0 when neither wins, and otherwise
// the order and why, in words.
func seriesOrder(cells []dateCell) (dateOrder, string) {
	type reading struct {
		span, disorder int // days from first to last; steps against the file's direction
		from, to       string
	}
	read := func(o dateOrder) (reading, bool) {
		var r reading
		var days []int
		for _, c := range cells {
			s, ok := c.format(o)
			if !ok {
				return r, false
			}
			t, _ := time.Parse(time.DateOnly, s)
			days = append(days, int(t.Unix()/86400))
			if r.from == "" || s < r.from {
				r.from = s
			}
			r.to = max(r.to, s)
		}
		if len(days) == 0 {
			return r, false
		}
		lo, hi, up, down := days[0], days[0], 0, 0
		for i, d := range days {
			lo, hi = min(lo, d), max(hi, d)
			if i > 0 && d < days[i-1] {
				down++
			}
			if i > 0 && d > days[i-1] {
				up++
			}
		}
		r.span, r.disorder = hi-lo, min(up, down)
		return r, true
	}
	d, dok := read(dmy)
	m, mok := read(mdy)
	switch {
	case dok && !mok:
		return dmy, "the only reading that gives real dates"
	case mok && !dok:
		return mdy, "the only reading that gives real dates"
	case !dok:
		return 0, ""
	}
	wins := func(a, b reading) bool {
		if a.span*2 <= b.span && b.span-a.span >= 7 {
			return true
		}
		return a.span <= b.span*2 && b.span <= a.span*2 && a.disorder == 0 && b.disorder >= 2
	}
	why := func(o dateOrder, a, b reading) string {
		other := mdy
		if o == mdy {
			other = dmy
		}
		if a.span*2 <= b.span {
			return fmt.Sprintf("which puts them in %d days (%s..%s) where %s would spread them over %d days (%s..%s)",
				a.span+1, a.from, a.to, other, b.span+1, b.from, b.to)
		}
		return fmt.Sprintf("which keeps them in order where %s would not", other)
	}
	switch {
	case wins(d, m):
		return dmy, why(dmy, d, m)
	case wins(m, d):
		return mdy, why(mdy, m, d)
	}
	return 0, ""
}
