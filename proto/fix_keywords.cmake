# Renames service stub members that protoc-c spells as C keywords.
foreach(f edge.pb-c.h store.pb-c.h)
  file(READ ${DIR}/${f} text)
  string(REPLACE "(*register)(" "(*register_)(" text "${text}")
  file(WRITE ${DIR}/${f} "${text}")
endforeach()
