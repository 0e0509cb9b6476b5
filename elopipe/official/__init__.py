"""Official rating lists: import (FIDE TXT/XML, FFE CSV) and comparison with computed lists."""
