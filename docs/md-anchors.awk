# Doxygen input filter for README.md (docs/Doxyfile.in, FILTER_PATTERNS): gives each `##`
# heading outside code fences the id GitHub derives from it ("## Driving a live Slurm" gets
# {#driving-a-live-slurm}), so that the README's in-page links resolve in the reference too.
/^```/ { fence = !fence }
!fence && /^##+ / {
  title = $0
  sub(/^#+ +/, "", title)
  slug = tolower(title)
  gsub(/[^a-z0-9 _-]/, "", slug)
  gsub(/ /, "-", slug)
  print $0 " {#" slug "}"
  next
}
{ print }
