package statements

import (
	"slices"
	"strings"
	"unicode"
)

// categoryRules map words in a description to a category, first match wins.
var categoryRules = []struct {
	category string
	words    []string
}{
	{"income", []string{"salary", "payroll", "wages", "dividend", "interest earned", "vendorpymt", "revenue", "refund", "gutschrift", "deposit"}},
	{"transfers", []string{"transfer", "payment received", "internet payment", "dauerauftrag", "xfer", "standing order", "paypal"}},
	{"fees", []string{"fee", "charge", "commission", "overdraft", "frais", "gebühr"}},
	{"groceries", []string{"tesco", "sainsbury", "asda", "aldi", "lidl", "waitrose", "morrisons", "whole foods", "safeway", "kroger", "grocery", "supermarket", "countdown", "carrefour"}},
	{"eating out", []string{"restaurant", "cafe", "coffee", "costa", "starbucks", "pret", "mcdonald", "burger", "pizza", "deliveroo", "uber eats", "just eat", "kfc", "subway"}},
	{"transport", []string{"uber", "lyft", "taxi", "tfl", "rail", "train", "parking", "transport", "fuel", "petrol", "shell", "esso", "bp ", "airline", "airways"}},
	{"bills", []string{"electric", "energy", "gas", "water", "council tax", "telekom", "vodafone", "o2", "ee ", "broadband", "internet", "phone", "insurance", "rent", "mortgage", "rechnung", "sliceho", "hosting", "github"}},
	{"shopping", []string{"amazon", "ebay", "itunes", "apple", "argos", "ikea", "store", "shop", "humble bundle", "carte"}},
	{"cash", []string{"atm", "cash", "withdrawal", "cheque", "check"}},
}

// categorise picks a category from the description.
func categorise(desc string, amount int64) string {
	d := " " + strings.ToLower(desc) + " "
	for _, r := range categoryRules {
		for _, w := range r.words {
			if strings.Contains(d, w) {
				if r.category == "income" && amount < 0 {
					continue
				}
				return r.category
			}
		}
	}
	if amount > 0 {
		return "income"
	}
	return "other"
}

// vendorOf is a short, readable merchant name: the leading words of the
// description without card numbers, references and locations.
func vendorOf(desc string) string {
	var words []string
	for _, w := range strings.Fields(desc) {
		if strings.IndexFunc(w, unicode.IsDigit) >= 0 || strings.ContainsAny(w, "*#/:") {
			if len(words) > 0 {
				break
			}
			continue
		}
		words = append(words, w)
		if len(words) == 3 {
			break
		}
	}
	for i, w := range words {
		r := []rune(strings.ToLower(w))
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// unusual is how far above the file's typical size an amount must be, and
// the floor under which nothing is unusual (in minor units).
const (
	unusualFactor = 10
	unusualFloor  = 100_000 // 1,000.00
)

// finish fills vendor and category and flags what a person should check:
// amounts far above the file's typical size.
func finish(r *Result) {
	sizes := make([]int64, 0, len(r.Transactions))
	for _, t := range r.Transactions {
		sizes = append(sizes, abs(t.AmountMinor))
	}
	slices.Sort(sizes)
	median := int64(0)
	if len(sizes) > 0 {
		median = sizes[len(sizes)/2]
	}
	for i := range r.Transactions {
		t := &r.Transactions[i]
		t.Vendor = vendorOf(t.Description)
		t.Category = categorise(t.Description, t.AmountMinor)
		if !t.NeedsReview && len(sizes) >= 3 && abs(t.AmountMinor) >= unusualFloor && abs(t.AmountMinor) > unusualFactor*median {
			t.NeedsReview, t.ReviewReason = true, "much larger than the other transactions"
		}
	}
}
