package orchestrator

import (
	"fmt"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// The server speaks the person's language. Each of its own sentences is
// written twice where it is built, English then French, and lang picks
// one; values from outside (quote) stay exactly as they are, money and
// dates are written the language's way. A sentence added in English only
// fails TestEveryToolSpeaksFrench.

// lang is the language of the server's sentences: french, or english for
// anything else. langOf reads it from a locale ("fr-FR", "fr", "en-GB").
type lang string

const (
	english lang = "en"
	french  lang = "fr"
)

func langOf(locale string) lang { return lang(contracts.Language(locale)) }

// say is en, or fr in French.
func (l lang) say(en, fr string) string {
	if l == french {
		return fr
	}
	return en
}

// sayf formats the sentence of l's language with args; both sentences
// take the same args in the same order.
func (l lang) sayf(en, fr string, args ...any) string { return fmt.Sprintf(l.say(en, fr), args...) }

// money writes m as FormatMoneyIn does for l: £1,234.50, 1 234,50 €.
func (l lang) money(m contracts.Money) string { return FormatMoneyIn(string(l), m) }

// date writes a YYYY-MM-DD date for l: as is, or 22/11/2026.
func (l lang) date(d string) string { return FormatDateIn(string(l), d) }

// day writes t's calendar day for l: "2 Jan 2006", or 02/01/2006.
func (l lang) day(t time.Time) string {
	if l == french {
		return l.date(t.Format(time.DateOnly))
	}
	return t.Format("2 Jan 2006")
}

// decimal writes a decimal as typed ("12.50") with l's decimal mark.
func (l lang) decimal(s string) string {
	if l == french {
		return strings.Replace(s, ".", ",", 1)
	}
	return s
}

// noun is a word in both languages, singular and plural; it also serves
// for a word that agrees with a count ("importée", "importées").
type noun struct{ en, ens, fr, frs string }

// word is w as it agrees with n: English takes the singular for 1 only,
// French for 0 and 1.
func (l lang) word(n int, w noun) string {
	switch {
	case l == french && (n == 0 || n == 1 || n == -1):
		return w.fr
	case l == french:
		return w.frs
	case n == 1:
		return w.en
	}
	return w.ens
}

// count is n with its noun: "1 expense", "3 dépenses".
func (l lang) count(n int, w noun) string { return fmt.Sprintf("%d %s", n, l.word(n, w)) }

// phrase is a piece of a sentence in both languages, such as a tool's verb.
type phrase struct{ en, fr string }

// in is p in l.
func (p phrase) in(l lang) string { return l.say(p.en, p.fr) }

// The nouns the sentences count.
var (
	nExpense     = noun{"expense", "expenses", "dépense", "dépenses"}
	nTransaction = noun{"transaction", "transactions", "transaction", "transactions"}
	nEntry       = noun{"entry", "entries", "opération", "opérations"}
	nTransfer    = noun{"transfer", "transfers", "virement", "virements"}
	nRecord      = noun{"record", "records", "résultat", "résultats"}
	nLineItem    = noun{"line item", "line items", "article", "articles"}
	nPayment     = noun{"payment", "payments", "paiement", "paiements"}
)

// frMonths are the months' names in French, January first.
var frMonths = [12]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}

// monthName is t's month's name in l: "January", "janvier".
func (l lang) monthName(t time.Time) string {
	if l == french {
		return frMonths[t.Month()-1]
	}
	return t.Format("January")
}

// kind names a kind of record as the store spells it (expense,
// transaction, entry, document, message) in l; an unknown kind as is.
func (l lang) kind(k string) string {
	if l != french {
		return k
	}
	if fr, ok := map[string]string{"expense": "dépense", "transaction": "transaction", "entry": "opération", "document": "document", "message": "message"}[k]; ok {
		return fr
	}
	return k
}
