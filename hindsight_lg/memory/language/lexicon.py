"""Word lists behind slot reading: canonical values, categories, relation words.

One table per idea, English and Chinese side by side, so "骑车" and "cycling"
are one value ("bike") and "switched to Vim" is known to be about an editor.
"""

from __future__ import annotations

import re

from hindsight_lg._text import STOPWORDS, has_cjk

# Attributes a person has one value of at a time: a new value replaces the old.
SINGLE_VALUED = frozenset(
    {"residence", "employer", "occupation", "commute", "name", "age", "diet"}
)

_CONTAINED = frozenset({"commute", "diet", "habit"})

# canonical value -> the words (English stems or Chinese) that mean it
_CANON: dict[str, dict[str, tuple[str, ...]]] = {
    "commute": {
        "bike": (
            "cycl*",
            "bik*",
            "bicycle",
            "ride my bike",
            "ride a bike",
            "骑自行车",
            "骑车",
            "自行车",
            "单车",
            "骑电动车",
        ),
        "car": ("driv*", "car", "开车", "自驾"),
        "walk": ("walk*", "on foot", "走路", "步行"),
        "subway": ("subway", "metro", "tube", "underground", "地铁"),
        "train": ("train", "rail", "火车", "高铁"),
        "bus": ("bus", "公交"),
        "taxi": ("taxi", "uber", "cab", "打车", "出租车"),
        "tram": ("tram",),
        "ferry": ("ferry", "轮渡"),
        "shuttle": ("shuttle", "班车"),
        "scooter": ("scoot*",),
    },
    "drink": {
        "green tea": ("green tea", "绿茶"),
        "black tea": ("black tea", "红茶"),
        "milk tea": ("milk tea", "bubble tea", "奶茶"),
        "oat milk latte": ("oat milk latte", "oat latte"),
        "espresso": ("espresso",),
        "latte": ("latte", "拿铁"),
        "coffee": ("coffee", "咖啡"),
        "tea": ("tea", "茶"),
        "beer": ("beer", "啤酒"),
        "wine": ("wine", "红酒", "葡萄酒"),
        "juice": ("juice", "果汁"),
        "soy milk": ("soy milk", "豆浆"),
        "milk": ("milk", "牛奶"),
        "water": ("water", "白开水", "水"),
    },
    "diet": {
        "vegetarian": ("vegetarian", "吃素", "素食"),
        "vegan": ("vegan", "纯素"),
        "keto": ("keto", "生酮"),
    },
    "habit": {
        "smoking": ("smok*", "cigarette*", "vap*", "抽烟", "吸烟", "烟"),
    },
}
_CANON["likes"] = _CANON["drink"]
_CANON["switch"] = {**_CANON["commute"], **_CANON["drink"]}

# value -> category slot, for "switched to X" and "I use X"
_CATEGORY: dict[str, tuple[str, ...]] = {
    "uses:editor": (
        "vim",
        "neovim",
        "emacs",
        "vs code",
        "vscode",
        "visual studio code",
        "sublime",
        "intellij",
        "pycharm",
        "cursor",
        "zed",
        "atom",
        "nano",
    ),
    "uses:phone": (
        "iphone",
        "android",
        "pixel",
        "galaxy",
        "huawei",
        "华为",
        "小米",
        "xiaomi",
        "苹果手机",
        "安卓",
    ),
    "uses:browser": ("chrome", "firefox", "safari", "edge", "brave", "arc"),
    "uses:os": ("linux", "ubuntu", "windows", "macos", "mac", "arch", "fedora"),
    "uses:notes": (
        "notion",
        "obsidian",
        "evernote",
        "onenote",
        "logseq",
        "bear",
        "印象笔记",
        "有道云笔记",
    ),
}

_RELATIONS = {
    "sister": ("sister", "妹妹", "姐姐"),
    "brother": ("brother", "哥哥", "弟弟"),
    "mother": ("mom", "mum", "mother", "妈妈", "母亲"),
    "father": ("dad", "father", "爸爸", "父亲"),
    "wife": ("wife", "老婆", "妻子"),
    "husband": ("husband", "老公", "丈夫"),
    "son": ("son", "儿子"),
    "daughter": ("daughter", "女儿"),
    "best friend": ("best friend", "好朋友"),
    "friend": ("friend", "朋友"),
    "colleague": ("colleague", "coworker", "co-worker", "同事"),
    "boss": ("boss", "老板"),
    "manager": ("manager", "经理"),
    "roommate": ("roommate", "室友"),
    "neighbour": ("neighbor", "neighbour", "邻居"),
    "dog": ("dog", "狗"),
    "cat": ("cat", "猫"),
    "child": ("kid", "child", "孩子"),
    "boyfriend": ("boyfriend", "男朋友"),
    "girlfriend": ("girlfriend", "女朋友"),
}
# Relations most people have several of: unnamed, they may be different people.
MANY = frozenset(
    "friend colleague child neighbour roommate cousin aunt uncle brother sister "
    "son daughter dog cat".split()
)
_RELATION_OF = {word: key for key, words in _RELATIONS.items() for word in words}
_EN_WORD = re.compile(r"[a-z0-9+#:.'-]+")


def relation_key(word: str) -> str:
    """One name per relation in both languages ("妹妹", "sister" -> "sister")."""
    low = word.lower()
    return _RELATION_OF.get(low, low)


def stem(word: str) -> str:
    """A light English stem: enough to join "cycling"/"cycle", "trains"/"train"."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def canonical(value: str, attribute: str) -> str:
    """``value`` as its table's canonical word, else its stemmed content words.

    Example:
        >>> canonical("cycling", "commute"), canonical("绿茶", "drink")
        ('bike', 'green tea')
    """
    table = _CANON.get(attribute, {})
    words = " ".join(stem(w) for w in _EN_WORD.findall(value) if w not in STOPWORDS)
    for key, synonyms in table.items():
        if any(_names(value, words, w, attribute) for w in synonyms):
            return key
    return value if has_cjk(value) else words


def category_of(value: str) -> str:
    """The slot a bare value belongs to ("vim" -> "uses:editor"), or ``""``."""
    for category, words in _CATEGORY.items():
        if any(_contains(value, w) for w in words):
            return category
    for attribute in ("commute", "drink", "diet", "habit"):
        table = _CANON[attribute]
        if value in table or canonical(value, attribute) in table:
            return attribute
    if _drink_head(value):
        return "drink"
    return ""


def _drink_head(value: str) -> bool:
    """Whether a phrase ends in a drink ("black coffee", "iced oat lattes")."""
    words = _EN_WORD.findall(value)
    heads = {stem(w) for ws in _CANON["drink"].values() for w in ws if " " not in w}
    # The value may be stemmed already ("black coffe"): either form counts.
    return bool(words) and bool({words[-1], stem(words[-1])} & heads)


def _names(value: str, stemmed: str, word: str, attribute: str) -> bool:
    """Whether ``word`` of a table names ``value``.

    A vehicle anywhere in a commute names it ("the 7:40 train"); a drink
    must be the whole value, so "oat milk lattes" is not "milk".
    """
    if attribute in _CONTAINED:
        return _contains(value, word)
    if has_cjk(word):
        # A Chinese noun ends in its head: "黑咖啡" is coffee, "咖啡店" a café.
        return value.endswith(word)
    return stemmed == " ".join(stem(w) for w in word.split())


def _contains(value: str, word: str) -> bool:
    if has_cjk(word):
        return word in value
    # A trailing "*" marks a stem ("cycl*" is "cycling" and "cycle").
    end = "" if word.endswith("*") else "(?![a-z])"
    return (
        re.search(rf"(?<![a-z]){re.escape(word.rstrip('*'))}{end}", value) is not None
    )


def same_value(a: str, b: str) -> bool:
    """Whether two normalised values name the same thing.

    Equal, or one's words all within the other's ("green tea" and "tea" are
    one drink told twice; "green tea" and "black tea" are two).
    """
    if a == b:
        return True
    if has_cjk(a) or has_cjk(b):
        return bool(a and b) and (a in b or b in a)
    wa, wb = set(a.split()), set(b.split())
    return bool(wa and wb) and (wa <= wb or wb <= wa)


# Words earlier statements of a slot use, to find them lexically ("moved to
# Shenzhen" has no word in common with "I live in Hangzhou" but the slot's).
_ANCHORS = {
    "residence": "live lives living moved relocated based home 住 搬 定居 家在",
    "employer": "work works working job joined employer company 工作 上班 入职 跳槽 公司",
    "occupation": "work job as became teacher 是 职业 当",
    "commute": "commute train bus subway metro tube drive cycle bike walk work office "
    "地铁 公交 骑车 开车 步行 上班 通勤",
    "drink": "drink drinks coffee tea morning 喝 咖啡 茶",
    "food": "eat eats food 吃",
    "diet": "vegetarian vegan eat meat 吃素 素食",
    "habit": "smoke smoking cigarettes vape 抽烟 吸烟 戒烟",
    "likes": "like love enjoy hate prefer fan fine 喜欢 讨厌 爱",
    "uses": "use using switched 用",
    "studies": "study studying learning learn 学 学习",
    "speaks": "speak 说 语",
    "plays": "play 弹 打",
    "pet": "have dog cat 养 狗 猫",
    "name": "name called 叫 名字",
    "age": "old years turned age 岁",
}


def anchor_words(attribute: str, subject: str) -> str:
    """The words of a slot and its subject, English and Chinese."""
    family = attribute.split(":")[0]
    words = _ANCHORS.get(family, "")
    if ":" in attribute:
        words += " " + attribute.split(":", 1)[1]
        words += " " + " ".join(_CATEGORY.get(attribute, ()))
    words += " " + " ".join(
        _RELATIONS.get(subject, (subject,) if subject != "user" else ())
    )
    return words
