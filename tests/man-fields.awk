# Compares plan-cli-predict(1) with the output fields (see man-fields.sh). Reads
# print-fields' lines first, then the man page; prints one line per
# difference ("undocumented KEY", "unknown key KEY", "csv column ...").
#
# In the JSON section, a key is documented as the tag of a .TP entry
# (plan.stage_layers, details.slot_s), or, inside the entry of an object
# (plan, uncompressed_bytes_per_iteration), as a bold word of its text;
# every bold name with a dot must be a key. In the CSV section, the bold
# names before "with the meanings" are the columns, in order. In "How the
# breakdown adds up", the first line with a " + " names the terms of
# breakdown_s, in order ("sum ..." when it does not).

# The arguments of a troff macro line, double quotes grouping.
function split_args(line, args,    n, i, c, cur, q, started) {
	n = 0; cur = ""; q = 0; started = 0
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (c == "\"") { q = !q; started = 1; continue }
		if (c == " " && !q) { if (started) args[++n] = cur; cur = ""; started = 0; continue }
		cur = cur c; started = 1
	}
	if (started) args[++n] = cur
	return n
}
# The names set in bold on a macro line (.B, .BR, .RB, .BI, .IB), space-separated.
function bold_words(line,    mac, rest, args, n, i, out, w, parts, k, m) {
	mac = line; sub(/ .*/, "", mac)
	rest = line; if (!sub(/^[^ ]+ /, "", rest)) rest = ""
	n = split_args(rest, args)
	out = ""
	for (i = 1; i <= n; i++) {
		if (mac == ".B") ;
		else if ((mac == ".BR" || mac == ".BI") && i % 2 == 1) ;
		else if ((mac == ".RB" || mac == ".IB") && i % 2 == 0) ;
		else continue
		w = args[i]
		if (w ~ /\\\(dq/) continue  # a quoted JSON value, not a key
		gsub(/\\-/, "-", w); gsub(/\\\(../, " ", w); gsub(/\\f[RBIP]/, " ", w)
		m = split(w, parts, /[ ,;:()]+/)
		for (k = 1; k <= m; k++)
			if (parts[k] ~ /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/) out = out " " parts[k]
	}
	return out
}

FNR == NR {
	if ($1 == "json") {
		key[$2] = 1; order[++nkeys] = $2
		if ($2 ~ /^breakdown_s\./) { t = $2; sub(/^breakdown_s\./, "", t); terms = terms " " t }
		p = $2
		while (sub(/\.[^.]*$/, "", p)) object[p] = 1
	} else if ($1 == "csv") {
		hdr[++nhdr] = $2
	}
	next
}
/^\.SS / {
	sect = ""
	if ($0 ~ /^\.SS JSON \(predict/) sect = "json"; else if ($0 ~ /^\.SS CSV \(predict/) sect = "csv"
	else if ($0 ~ /^\.SS How the breakdown adds up/) sect = "sum"
	next
}
sect == "sum" && /^\./ && / \+ / {
	man_terms = bold_words($0); sect = ""; next
}
sect == "csv" {
	if ($0 ~ /^with the meanings/) { sect = ""; next }
	if ($0 ~ /^\./) { n = split(bold_words($0), w, " "); for (i = 1; i <= n; i++) man_csv[++nman_csv] = w[i] }
	next
}
sect != "json" { next }
/^\.RS/ { depth++; entry = ""; next }
/^\.RE/ { depth--; entry = ""; next }
/^\.(PP|LP|P)$/ { entry = ""; next }
/^\.TP/ { want_tag = 1; next }
want_tag {
	want_tag = 0
	n = split(bold_words($0), w, " ")
	entry = ""
	for (i = 1; i <= n; i++) {
		documented[w[i]] = 1
		if (!(w[i] in key) && !(w[i] in object)) print "unknown tag " w[i]
		if (w[i] ~ /\./) refs[w[i]] = 1
	}
	if (depth == 0 && n == 1 && (w[1] in object)) entry = w[1]
	next
}
/^\./ {
	n = split(bold_words($0), w, " ")
	for (i = 1; i <= n; i++) {
		if (w[i] ~ /\./ && !(w[i] in key) && !(w[i] in object)) print "unknown key " w[i]
		if (entry == "" || w[i] ~ /\./) continue
		documented[entry "." w[i]] = 1
		if (!((entry "." w[i]) in key) && !((entry "." w[i]) in object) && !(w[i] in key) && !(w[i] in object))
			print "unknown key " entry "." w[i]
	}
}
END {
	for (i = 1; i <= nkeys; i++)
		if (!(order[i] in documented)) print "undocumented " order[i]
	for (i = 1; i <= nhdr || i <= nman_csv; i++)
		if (hdr[i] != man_csv[i]) { print "csv column " i ": man page '" man_csv[i] "', header '" hdr[i] "'"; break }
	if (man_terms != terms) print "sum man page '" man_terms "', terms '" terms "'"
	print "checked " nkeys " keys " nhdr " columns"
}
