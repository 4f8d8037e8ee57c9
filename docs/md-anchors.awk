# Doxygen input filter for the Markdown files (docs/Doxyfile.in, FILTER_PATTERNS); GitHub shows
# the same files unfiltered.
# - README.md: each `##` heading outside code fences gets the id GitHub derives from it
#   ("## Driving a live Slurm" gets {#driving-a-live-slurm}), so that the README's in-page
#   links resolve in the reference too.
# - examples/README.md: its title gets the page id `examples_readme` the guide links to.
# Other files pass unchanged (docs/pages/ give their ids themselves).
FNR == 1 { examples = FILENAME ~ /examples\/README\.md$/; readme = !examples && FILENAME ~ /README\.md$/ }
/^```/ { fence = !fence }
examples && !titled && /^# / { print $0 " {#examples_readme}"; titled = 1; next }
readme && !fence && /^##+ / {
  title = $0
  sub(/^#+ +/, "", title)
  slug = tolower(title)
  gsub(/[^a-z0-9 _-]/, "", slug)
  gsub(/ /, "-", slug)
  print $0 " {#" slug "}"
  next
}
{ print }
