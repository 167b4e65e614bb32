package statements

import (
	"bytes"
	"math/big"
	"regexp"
	"strings"

	"github.com/aclindsa/ofxgo"
)

// parseOFX reads OFX/QFX 1.x (SGML) and 2.x (XML) with ofxgo; files that
// ofxgo rejects for a missing element it does not need here (many banks
// leave some out) are read leniently from their STMTTRN records.
func parseOFX(raw []byte, text string, opts Options) (Result, error) {
	utf := []byte(text)
	if !bytes.Equal(utf, raw) {
		// ofxgo reads UTF-8; the header may still say 8859-1.
		utf = reCharset.ReplaceAll(utf, []byte("CHARSET:NONE"))
	}
	if resp, err := ofxgo.ParseResponse(bytes.NewReader(utf)); err == nil {
		if b, ok := fromOFXGo(resp, opts); ok {
			return b.finish()
		}
	}
	return lenientOFX(text, opts)
}

var reCharset = regexp.MustCompile(`CHARSET:[A-Za-z0-9-]+`)

func ofxDesc(name, memo string) string {
	name, memo = strings.TrimSpace(name), strings.TrimSpace(memo)
	switch {
	case memo == "" || strings.Contains(name, memo):
		return name
	case strings.Contains(memo, name):
		return memo
	}
	return name + " " + memo
}

func fromOFXGo(resp *ofxgo.Response, opts Options) (*builder, bool) {
	b := newBuilder("ofx", "OFX "+resp.Version.String(), opts)
	add := func(cur, acct string, list *ofxgo.TransactionList) {
		if list == nil {
			return
		}
		for _, t := range list.Transactions {
			c := cur
			if t.Currency != nil {
				if ok, _ := t.Currency.Valid(); ok {
					c = t.Currency.CurSym.String()
				}
			}
			if !isCurrency(c) {
				c = ""
			}
			name := string(t.Name)
			if t.Payee != nil && name == "" {
				name = string(t.Payee.Name)
			}
			d := t.DtPosted.Time
			_ = b.add(rawTxn{date: dateCell{y: d.Year(), a: int(d.Month()), b: d.Day(), fixed: ymd}, amt: new(big.Rat).Set(&t.TrnAmt.Rat),
				ccy: c, desc: ofxDesc(name, string(t.Memo)), fitid: strings.TrimSpace(string(t.FiTID)), account: acct})
		}
	}
	for _, m := range resp.Bank {
		if st, ok := m.(*ofxgo.StatementResponse); ok {
			add(st.CurDef.String(), string(st.BankAcctFrom.AcctID), st.BankTranList)
		}
	}
	for _, m := range resp.CreditCard {
		if st, ok := m.(*ofxgo.CCStatementResponse); ok {
			add(st.CurDef.String(), string(st.CCAcctFrom.AcctID), st.BankTranList)
		}
	}
	return b, len(b.txns) > 0
}

var (
	reTrn    = regexp.MustCompile(`(?is)<STMTTRN>(.*?)(?:</STMTTRN>|<STMTTRN>|</BANKTRANLIST>)`)
	reCurDef = regexp.MustCompile(`(?i)<CURDEF>\s*([A-Z]{3})`)
	reLeaf   = regexp.MustCompile(`(?is)<([A-Z0-9.]+)>([^<\r\n]*)`)
)

// ofxFields reads the leaf elements of a block, closed or not.
func ofxFields(block string) map[string]string {
	out := map[string]string{}
	for _, m := range reLeaf.FindAllStringSubmatch(block, 64) {
		k := strings.ToUpper(m[1])
		if _, ok := out[k]; !ok {
			out[k] = strings.TrimSpace(m[2])
		}
	}
	return out
}

// lenientOFX reads STMTTRN records directly.
func lenientOFX(text string, opts Options) (Result, error) {
	b := newBuilder("ofx", "OFX (read leniently)", opts)
	if m := reCurDef.FindStringSubmatch(text); m != nil && isCurrency(strings.ToUpper(m[1])) {
		b.fileCcy = strings.ToUpper(m[1])
	}
	blocks := reTrn.FindAllStringSubmatch(text, MaxRows+1)
	if len(blocks) > MaxRows {
		return Result{}, unreadable("more than %d transactions", MaxRows)
	}
	for _, bl := range blocks {
		f := ofxFields(bl[1])
		c, ok := splitDate(f["DTPOSTED"])
		a, err := readAmount(f["TRNAMT"], sepDot)
		if !ok || c.fixed != ymd || err != nil {
			b.warn("skipped a transaction without a readable date or amount")
			continue
		}
		ccy := ""
		if cs := strings.ToUpper(f["CURSYM"]); isCurrency(cs) {
			ccy = cs
		}
		_ = b.add(rawTxn{date: c, amt: a.value(), ccy: ccy, desc: ofxDesc(f["NAME"], f["MEMO"]), fitid: f["FITID"]})
	}
	if len(b.txns) == 0 {
		return Result{}, unreadable("an OFX file without transactions")
	}
	return b.finish()
}
