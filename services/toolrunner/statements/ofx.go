package statements

import (
	"bytes"
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
		if r, ok := fromOFXGo(resp, opts); ok {
			return r, nil
		}
	}
	return lenientOFX(text, opts)
}

var reCharset = regexp.MustCompile(`CHARSET:[A-Za-z0-9-]+`)

func fromOFXGo(resp *ofxgo.Response, opts Options) (Result, bool) {
	res := Result{Format: "ofx", Layout: "OFX " + resp.Version.String()}
	add := func(cur string, list *ofxgo.TransactionList) {
		if list == nil {
			return
		}
		for _, t := range list.Transactions {
			amt, _, err := parseAmount(t.TrnAmt.String())
			if err != nil {
				continue
			}
			c := cur
			if t.Currency != nil {
				c = t.Currency.CurSym.String()
			}
			desc := strings.TrimSpace(string(t.Name))
			if t.Payee != nil && desc == "" {
				desc = strings.TrimSpace(string(t.Payee.Name))
			}
			if memo := strings.TrimSpace(string(t.Memo)); memo != "" && !strings.Contains(memo, desc) {
				desc = strings.TrimSpace(desc + " " + memo)
			} else if memo != "" {
				desc = memo
			}
			res.Transactions = append(res.Transactions, Txn{Date: t.DtPosted.Format("2006-01-02"), AmountMinor: amt, Currency: orDefault(c, opts.DefaultCurrency),
				Description: strings.Join(strings.Fields(desc), " "), FITID: strings.TrimSpace(string(t.FiTID))})
		}
	}
	for _, m := range resp.Bank {
		if st, ok := m.(*ofxgo.StatementResponse); ok {
			add(st.CurDef.String(), st.BankTranList)
		}
	}
	for _, m := range resp.CreditCard {
		if st, ok := m.(*ofxgo.CCStatementResponse); ok {
			add(st.CurDef.String(), st.BankTranList)
		}
	}
	return res, len(res.Transactions) > 0
}

func orDefault(s, d string) string {
	if len(s) == 3 {
		return s
	}
	return d
}

var (
	reTrn    = regexp.MustCompile(`(?is)<STMTTRN>(.*?)(?:</STMTTRN>|<STMTTRN>|</BANKTRANLIST>)`)
	reCurDef = regexp.MustCompile(`(?i)<CURDEF>\s*([A-Z]{3})`)
)

// ofxField reads a leaf element, closed or not.
func ofxField(block, name string) string {
	re := regexp.MustCompile(`(?is)<` + name + `>([^<\r\n]*)`)
	if m := re.FindStringSubmatch(block); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// lenientOFX reads STMTTRN records directly.
func lenientOFX(text string, opts Options) (Result, error) {
	cur := opts.DefaultCurrency
	if m := reCurDef.FindStringSubmatch(text); m != nil {
		cur = strings.ToUpper(m[1])
	}
	res := Result{Format: "ofx", Layout: "OFX (read leniently)"}
	blocks := reTrn.FindAllStringSubmatch(text, MaxRows+1)
	if len(blocks) > MaxRows {
		return Result{}, unreadable("more than %d transactions", MaxRows)
	}
	for _, b := range blocks {
		dt := ofxField(b[1], "DTPOSTED")
		c, ok := splitDate(dt)
		date, ok2 := c.format(ymd)
		amt, _, err := parseAmount(ofxField(b[1], "TRNAMT"))
		if !ok || !ok2 || c.fixed != ymd || err != nil {
			res.Warnings = append(res.Warnings, "skipped a transaction without a readable date or amount")
			continue
		}
		desc := ofxField(b[1], "NAME")
		if memo := ofxField(b[1], "MEMO"); memo != "" && !strings.Contains(memo, desc) {
			desc = strings.TrimSpace(desc + " " + memo)
		} else if memo != "" {
			desc = memo
		}
		res.Transactions = append(res.Transactions, Txn{Date: date, AmountMinor: amt, Currency: cur,
			Description: strings.Join(strings.Fields(desc), " "), FITID: ofxField(b[1], "FITID")})
	}
	if len(res.Transactions) == 0 {
		return Result{}, unreadable("an OFX file without transactions")
	}
	return res, nil
}
