# tools/bench/mcu_mapsum.awk MAP: the linked bytes of a generated package image by object group
# (model = model.c, kern = the kernel files, main = the test main and input, libc =
# picolibc, crt0, libgcc and padding) and kind (text, rodata, data, bss), from the
# GNU ld map: "model.text model.rodata model.data model.bss kern.* main.* libc.*".
/^Linker script and memory map/ { on = 1; next }
!on { next }
/^\.[A-Za-z_]/ { out = $1; pending = ""; next }
function hex(s,   i, c, v) {
  v = 0; s = tolower(s); sub(/^0x/, "", s)
  for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); v = v * 16 + c - 1 }
  return v
}
function add(name, size, file,   kind, grp) {
  if (out !~ /^\.(init|text|rodata|srodata|data|sdata|tdata|bss|sbss|tbss)$/) return
  if (name == ".fill") kind = out ~ /data$/ ? "data" : out ~ /bss$/ ? "bss" : "text"
  else if (name ~ /^\.(s)?rodata/) kind = "rodata"
  else if (name ~ /^\.(text|init)/) kind = "text"
  else if (name ~ /^\.(s|t)?data/) kind = "data"
  else if (name ~ /^\.(s|t)?bss/ || name == "COMMON") kind = "bss"
  else kind = "text"
  if (file ~ /libsy_model\.a\(model\.c\.obj\)/) grp = "model"
  else if (file ~ /libsy_model\.a\(/) grp = "kern"
  else if (file ~ /\/src\/(main|test_input)\.c\.obj$/) grp = "main"
  else grp = "libc"
  sum[grp "." kind] += hex(size)
}
/^ \*fill\*/ { if ($3 ~ /^0x/) add(".fill", $3, "fill"); next }
/^ [.A-Z]/ {
  if (NF >= 4 && $2 ~ /^0x/ && $3 ~ /^0x/) { add($1, $3, $4); pending = "" }
  else if (NF == 1) pending = $1
  next
}
pending != "" && $1 ~ /^0x/ && $2 ~ /^0x/ && NF >= 3 { add(pending, $2, $3); pending = ""; next }
{ pending = "" }
END {
  split("model kern main libc", g, " "); split("text rodata data bss", k, " ")
  for (i = 1; i <= 4; i++) for (j = 1; j <= 4; j++) printf "%d ", sum[g[i] "." k[j]] + 0
  print ""
}
