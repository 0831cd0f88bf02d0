" .llmp files are llmp's language
autocmd BufNewFile,BufRead *.llmp setfiletype llmp
