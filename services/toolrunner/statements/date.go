package statements

import (
	"regexp"
	"strconv"
	"time"
)

// dateOrder is how a column writes dates.
type dateOrder int

const (
	ymd dateOrder = iota + 1 // 2014-01-22, 2014/01/22, 20140122
	dmy                      // 22.01.2014, 22/01/2014
	mdy                      // 01/22/2014
)

var (
	reCompact = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})(?:\d{6})?(?:\.\d+)?(?:\[[^\]]*\])?$`) // 20091224 or 20091224120000[0:GMT]
	reYMD     = regexp.MustCompile(`^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ].*)?$`)
	reXYZ     = regexp.MustCompile(`^(\d{1,2})([-/.])(\d{1,2})[-/.](\d{2}|\d{4})(?:[T ].*)?$`)
)

// dateParts splits a cell into year and two unordered fields; order says
// which forms were possible.
type dateCell struct {
	y, a, b int
	fixed   dateOrder // ymd when unambiguous from the form; 0 when a/b order is open
	sep     string
}

func splitDate(s string) (dateCell, bool) {
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
		y, _ := strconv.Atoi(m[4])
		if len(m[4]) == 2 {
			y += 2000
		}
		ok := (a >= 1 && a <= 31 && b >= 1 && b <= 12) || (a >= 1 && a <= 12 && b >= 1 && b <= 31)
		return dateCell{y: y, a: a, b: b, sep: m[2]}, ok && y >= 1970 && y <= 2100
	}
	return dateCell{}, false
}

func validDate(y, m, d int) bool {
	if y < 1970 || y > 2100 || m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// orderOf decides day/month order for a column's cells: a field over 12
// settles it; otherwise "." means day first (European), and "/" with a
// dollar currency means month first. ambiguous reports a guess.
func orderOf(cells []dateCell, currency string) (order dateOrder, ambiguous bool) {
	dayFirst, monthFirst := false, false
	for _, c := range cells {
		if c.fixed == ymd {
			return ymd, false
		}
		if c.a > 12 {
			dayFirst = true
		}
		if c.b > 12 {
			monthFirst = true
		}
	}
	switch {
	case dayFirst && !monthFirst:
		return dmy, false
	case monthFirst && !dayFirst:
		return mdy, false
	case dayFirst && monthFirst:
		return 0, true // inconsistent column
	}
	if len(cells) > 0 && cells[0].sep == "." {
		return dmy, false
	}
	if currency == "USD" {
		return mdy, true
	}
	return dmy, true
}

func (c dateCell) format(o dateOrder) (string, bool) {
	y, m, d := c.y, c.a, c.b
	if o == dmy {
		m, d = c.b, c.a
	}
	if !validDate(y, m, d) {
		return "", false
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), true
}
