#!/usr/bin/env python3
"""Writes the tokenizer speed corpus: three text files of a few MB each,
made from text already on the machine plus CJK sentences written here.

  scripts/tokenizer-bench-corpus.py OUTDIR [--mb N]

  english.txt  licence texts and package documentation (/usr/share)
  code.txt     C/C++ headers and Python sources (/usr/include, /usr/lib/python3*)
  cjk.txt      Chinese, Japanese and Korean sentences, shuffled with a fixed seed

The files are generated, not committed; the same machine gives the same
files (sorted walks, fixed seed). strata-bench-tokenizer and
scripts/tokenizer-peers.py read them.
"""
import argparse
import glob
import gzip
import os
import random
import sys

CJK_SEEDS = [
    "我们今天去公园散步，天气非常好。",
    "机器学习是人工智能的一个重要分支，它研究计算机如何从数据中学习。",
    "这个城市的夜景非常美丽，很多游客专门来这里拍照。",
    "请在下周一之前把报告发给我，谢谢你的帮助。",
    "长江是中国最长的河流，全长约六千三百公里。",
    "他每天早上六点起床，先跑步，然后吃早饭。",
    "東京は日本の首都で、世界有数の大都市です。",
    "今日はとても暑いので、冷たいお茶を飲みましょう。",
    "新しいプログラミング言語を勉強するのは楽しいです。",
    "駅までの道を教えていただけませんか。",
    "桜の季節になると、多くの人が花見に出かけます。",
    "안녕하세요. 오늘 날씨가 정말 좋네요.",
    "한국어는 한글이라는 고유한 문자를 사용합니다.",
    "저는 주말마다 친구들과 함께 등산을 갑니다.",
    "이 책은 인공지능의 역사와 미래에 대해 설명합니다.",
    "서울은 대한민국의 수도이며 인구가 약 천만 명입니다.",
]


def read_text(path):
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            data = f.read()
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return None


def collect(patterns, limit):
    parts, size = [], 0
    for pattern in patterns:
        for path in sorted(glob.glob(pattern, recursive=True)):
            if not os.path.isfile(path):
                continue
            text = read_text(path)
            if not text:
                continue
            parts.append(text)
            size += len(text.encode("utf-8"))
            if size >= limit:
                return "\n".join(parts)
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--mb", type=float, default=3.0,
                        help="about this many MB per file (default 3)")
    args = parser.parse_args()
    limit = int(args.mb * 1e6)
    os.makedirs(args.outdir, exist_ok=True)
    english = collect(["/usr/share/common-licenses/*",
                       "/usr/share/doc/**/copyright",
                       "/usr/share/doc/**/README*",
                       "/usr/share/doc/**/changelog*.gz"], limit)
    code = collect(["/usr/include/**/*.h", "/usr/lib/python3*/**/*.py"], limit)
    rng = random.Random(1234)
    sentences, size = [], 0
    while size < limit // 3:
        s = rng.choice(CJK_SEEDS)
        sentences.append(s + ("\n" if rng.random() < 0.2 else ""))
        size += len(s.encode("utf-8"))
    cjk = "".join(sentences)
    for name, text in (("english.txt", english), ("code.txt", code),
                       ("cjk.txt", cjk)):
        path = os.path.join(args.outdir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{path}: {len(text.encode('utf-8')) / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
