package statements

import (
	"encoding/xml"
	"io"
	"strings"
)

// ISO 20022 bank-to-customer statements: camt.053 (statement), and the
// same entries in camt.052 (report) and camt.054 (notification). One file
// may hold several accounts in several currencies.

func looksLikeCamt(text string) bool {
	head := text[:min(len(text), 4096)]
	return strings.Contains(head, "camt.05") || strings.Contains(head, "BkToCstmrStmt") ||
		strings.Contains(head, "BkToCstmrAcctRpt") || strings.Contains(head, "BkToCstmrDbtCdtNtfctn")
}

type camtAmt struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

type camtDate struct {
	Dt   string `xml:"Dt"`
	DtTm string `xml:"DtTm"`
}

func (d camtDate) String() string {
	if d.Dt != "" {
		return strings.TrimSpace(d.Dt)
	}
	s := strings.TrimSpace(d.DtTm)
	return s[:min(len(s), 10)]
}

type camtParty struct {
	Nm  string `xml:"Nm"`
	Pty struct {
		Nm string `xml:"Nm"`
	} `xml:"Pty"`
}

func (p *camtParty) name() string {
	if p == nil {
		return ""
	}
	if p.Nm != "" {
		return p.Nm
	}
	return p.Pty.Nm
}

type camtTx struct {
	Refs struct {
		EndToEndID string `xml:"EndToEndId"`
	} `xml:"Refs"`
	RltdPties struct {
		Dbtr *camtParty `xml:"Dbtr"`
		Cdtr *camtParty `xml:"Cdtr"`
	} `xml:"RltdPties"`
	RmtInf struct {
		Ustrd []string `xml:"Ustrd"`
		Strd  []struct {
			CdtrRefInf struct {
				Ref string `xml:"Ref"`
			} `xml:"CdtrRefInf"`
		} `xml:"Strd"`
	} `xml:"RmtInf"`
	AddtlTxInf string `xml:"AddtlTxInf"`
}

type camtEntry struct {
	NtryRef   string  `xml:"NtryRef"`
	Amt       camtAmt `xml:"Amt"`
	CdtDbtInd string  `xml:"CdtDbtInd"`
	RvslInd   string  `xml:"RvslInd"`
	Sts       struct {
		Text string `xml:",chardata"`
		Cd   string `xml:"Cd"`
	} `xml:"Sts"`
	BookgDt     camtDate `xml:"BookgDt"`
	ValDt       camtDate `xml:"ValDt"`
	AcctSvcrRef string   `xml:"AcctSvcrRef"`
	BkTxCd      struct {
		Prtry struct {
			Cd string `xml:"Cd"`
		} `xml:"Prtry"`
	} `xml:"BkTxCd"`
	TxDtls       []camtTx `xml:"NtryDtls>TxDtls"`
	AddtlNtryInf string   `xml:"AddtlNtryInf"`
}

type camtStmt struct {
	ID   string `xml:"Id"`
	Acct struct {
		ID struct {
			IBAN string `xml:"IBAN"`
			Othr string `xml:"Othr>Id"`
		} `xml:"Id"`
		Ccy string `xml:"Ccy"`
	} `xml:"Acct"`
	Bal []struct {
		Amt camtAmt `xml:"Amt"`
	} `xml:"Bal"`
	Ntry []camtEntry `xml:"Ntry"`
}

type camtDoc struct {
	Stmts []camtStmt `xml:"BkToCstmrStmt>Stmt"`
	Rpts  []camtStmt `xml:"BkToCstmrAcctRpt>Rpt"`
	Ntfs  []camtStmt `xml:"BkToCstmrDbtCdtNtfctn>Ntfctn"`
}

func parseCamt(text string, opts Options) (Result, error) {
	var doc camtDoc
	dec := xml.NewDecoder(strings.NewReader(text))
	dec.Strict = false
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	if err := dec.Decode(&doc); err != nil {
		return Result{}, unreadable("an ISO 20022 file that is not well-formed XML: %v", err)
	}
	stmts := append(append(doc.Stmts, doc.Rpts...), doc.Ntfs...)
	b := newBuilder("camt053", "ISO 20022 camt.05x", opts)
	accounts, pending := 0, 0
	for _, st := range stmts {
		acct := st.Acct.ID.IBAN
		if acct == "" {
			acct = st.Acct.ID.Othr
		}
		acct = strings.TrimSpace(acct)
		ccy := strings.TrimSpace(st.Acct.Ccy)
		if !isCurrency(ccy) {
			ccy = ""
			for _, bal := range st.Bal {
				if isCurrency(bal.Amt.Ccy) {
					ccy = bal.Amt.Ccy
				}
			}
		}
		accounts++
		for _, e := range st.Ntry {
			status := strings.ToUpper(strings.TrimSpace(e.Sts.Text + e.Sts.Cd))
			if status == "PDNG" || status == "INFO" || status == "FUTR" {
				pending++
				continue
			}
			a, err := readAmount(e.Amt.Value, sepDot)
			if err != nil {
				b.warn("skipped an entry without a readable amount")
				continue
			}
			amt := a.value()
			amt.Abs(amt)
			switch strings.TrimSpace(e.CdtDbtInd) {
			case "DBIT":
				amt.Neg(amt)
			case "CRDT":
			default:
				b.warn("skipped an entry that is neither credit nor debit")
				continue
			}
			ds := e.BookgDt.String()
			if ds == "" {
				ds = e.ValDt.String()
			}
			dc, ok := splitDate(ds)
			if !ok || dc.fixed != ymd {
				b.warn("skipped an entry without a booking date")
				continue
			}
			c := strings.TrimSpace(e.Amt.Ccy)
			if !isCurrency(c) {
				c = ccy
			}
			fitid := strings.TrimSpace(e.AcctSvcrRef)
			if fitid == "" {
				fitid = strings.TrimSpace(e.NtryRef)
			}
			if fitid != "" && acct != "" {
				fitid = acct + ":" + fitid
			}
			if err := b.add(rawTxn{date: dc, amt: amt, ccy: c, desc: camtDesc(e), fitid: fitid, account: acct}); err != nil {
				return Result{}, err
			}
		}
	}
	if accounts == 0 {
		return Result{}, unreadable("an ISO 20022 file without statements")
	}
	if accounts > 1 {
		b.res.Layout += ", " + countOf(accounts, "statement")
	}
	if pending > 0 {
		b.warn("left out %s not yet booked", countOf(pending, "entry"))
	}
	if len(b.txns) == 0 {
		return Result{}, unreadable("an ISO 20022 statement without booked entries")
	}
	return b.finish()
}

// camtDesc: the other party's name and the remittance text; "?" is a
// line separator some banks use inside them.
func camtDesc(e camtEntry) string {
	var parts []string
	add := func(s string) {
		s = strings.Join(strings.Fields(strings.ReplaceAll(s, "?", " ")), " ")
		if s != "" && !containsFold(parts, s) {
			parts = append(parts, s)
		}
	}
	for _, tx := range e.TxDtls {
		if e.CdtDbtInd == "DBIT" {
			add(tx.RltdPties.Cdtr.name())
		} else {
			add(tx.RltdPties.Dbtr.name())
		}
		for _, u := range tx.RmtInf.Ustrd {
			add(u)
		}
		for _, s := range tx.RmtInf.Strd {
			add(s.CdtrRefInf.Ref)
		}
		add(tx.AddtlTxInf)
	}
	add(e.AddtlNtryInf)
	if len(parts) == 0 {
		add(e.BkTxCd.Prtry.Cd)
	}
	if len(parts) == 0 {
		add(e.NtryRef)
	}
	return strings.Join(parts, " ")
}

func containsFold(list []string, s string) bool {
	for _, l := range list {
		if strings.Contains(strings.ToLower(l), strings.ToLower(s)) {
			return true
		}
	}
	return false
}
