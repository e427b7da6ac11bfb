# Writes a C header holding a text file as one string: kernels.ptx goes into the tests' binaries, so they
# run from any directory (the GPU machine runs a build made elsewhere).
import sys
src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(src, encoding='utf-8').read()
with open(dst, 'w', encoding='utf-8') as out:
    out.write('/* generated from %s by embed.py */\n' % src.split('/')[-1])
    out.write('static const char %s[] =\n' % name)
    for line in text.splitlines():
        out.write('  "%s\\n"\n' % line.replace('\\', '\\\\').replace('"', '\\"'))
    out.write('  ;\n')
