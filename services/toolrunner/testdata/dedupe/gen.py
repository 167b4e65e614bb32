# (day, pence, mt940 name, csv description); negative is money out
month = [
 (1, 250000, "ACME LTD SALARY", "Salary Acme"),
 (1, -120000, "RENT LANDLORD SO", "Rent"),
 (2, -1299, "TESCO STORES 3312", "Tesco"),
 (3, -450, "PRET A MANGER 221", "Pret"),
 (3, -300, "COFFEE HUT", "Coffee Hut"),
 (3, -300, "COFFEE HUT", "Coffee Hut"),
 (4, -2599, "AMAZON MKTPLACE", "Amazon"),
 (5, -8900, "BRITISH GAS DD", "British Gas"),
 (6, -1550, "TFL TRAVEL CH", "TfL"),
 (7, -3420, "SAINSBURYS S/MKT", "Sainsbury's"),
 (8, -999, "NETFLIX.COM", "Netflix"),
 (9, -1200, "BOOTS 1123", "Boots"),
 (10, -2250, "DELIVEROO", "Deliveroo"),
 (11, -4500, "JOHN LEWIS", "John Lewis"),
 (12, -799, "SPOTIFY", "Spotify"),
 (13, -1299, "TESCO STORES 3312", "Tesco"),
 (14, 2500, "REFUND AMAZON", "Amazon refund"),
 (15, -6000, "VIRGIN MEDIA DD", "Virgin Media"),
 (16, -1550, "TFL TRAVEL CH", "TfL"),
 (17, -3100, "WAITROSE 441", "Waitrose"),
 (18, -1800, "ODEON CINEMAS", "Odeon"),
 (19, -2750, "SHELL 0032", "Shell"),
 (20, -50000, "TFR TO SAVINGS", "Transfer to savings"),
 (21, -1299, "TESCO STORES 3312", "Tesco"),
 (22, -650, "GREGGS 12", "Greggs"),
 (23, -4200, "UBER TRIP", "Uber"),
 (24, -1550, "TFL TRAVEL CH", "TfL"),
 (26, -3300, "SAINSBURYS S/MKT", "Sainsbury's"),
 (28, -1500, "GYM GROUP DD", "The Gym Group"),
 (30, -2100, "WAITROSE 441", "Waitrose"),
]
def mt940(acct, ccy, lines, open_bal, year_month="2610"):
    out = [":20:STMT" + acct[-4:], ":25:" + acct, ":28C:00010/001", ":60F:C%s01%s%s" % (year_month, ccy, money(open_bal))]
    for i, (d, p, name, *_ ) in enumerate(lines):
        dc = "D" if p < 0 else "C"
        ref = "NONREF" if name == "COFFEE HUT" else "REF%04d" % (i + 1)
        out.append(":61:%s%02d%s%02d%s%sNMSC%s" % (year_month, d, year_month[2:], d, dc, money(abs(p)), ref))
        out.append(":86:/NAME/%s/REMI/CARD PAYMENT" % name)
    bal = open_bal + sum(p for _, p, *_ in lines)
    out.append(":62F:%s%s31%s%s" % ("C" if bal >= 0 else "D", year_month, ccy, money(abs(bal))))
    return "\r\n".join(out) + "\r\n-\r\n"
def money(p):
    return "%d,%02d" % (p // 100, p % 100)
def csv(lines, year="2026", m="10"):
    out = ["Date,Description,Amount"]
    for d, p, _, desc in lines:
        out.append("%s-%s-%02d,%s,%s%d.%02d" % (year, m, d, desc, "-" if p < 0 else "", abs(p) // 100, abs(p) % 100))
    return "\n".join(out) + "\n"
open("current-2026-10.sta", "w").write(mt940("GB29NWBK60161331926819", "GBP", month, 100000))
open("current-2026-10.csv", "w").write(csv(month))
# The CSV export of 25 Oct to 5 Nov: the last lines of October again and
# the first of November, one of which settles the coffee typed by hand
# the day before and one whose amount and date match a lunch typed by hand
# though its words do not.
nov = [
 (1, -1299, "", "Tesco"),
 (3, -450, "", "Costa Coffee"),
 (4, -1200, "", "Pret A Manger"),
 (5, -999, "", "Netflix"),
]
over = [l for l in month if l[0] >= 26]
text = "Date,Description,Amount\n" + csv(over).split("\n", 1)[1] + csv(nov, m="11").split("\n", 1)[1]
open("current-2026-10-25-to-11-05.csv", "w").write(text)
# The savings account's side of the transfer, a day later.
open("savings-2026-10.sta", "w").write(mt940("GB94BARC10201530093459", "GBP", [(21, 50000, "FROM CURRENT ACCOUNT", "")], 0))
# A euro card: its amounts are never added to pounds.
open("travel-eur-2026-10.sta", "w").write(mt940("DE89370400440532013000", "EUR", [(9, -4550, "SNCF PARIS", ""), (10, -1200, "CAFE DE FLORE", "")], 50000))
