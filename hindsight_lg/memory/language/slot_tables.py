"""The keyword tables behind :mod:`.slots`: which words set which slot.

One table per language, ordered so the most specific pattern wins: each
row names an attribute and the pattern whose ``v`` group is its value
(English) or the Chinese value up to a clause's end. :mod:`.slots` reads a
statement with them; a reader checking what is understood reads them here.
"""

from __future__ import annotations

import re

EN_REL = (
    r"sister|brother|wife|husband|son|daughter|mom|mum|mother|dad|father|"
    r"best friend|friend|boss|manager|partner|colleague|coworker|cousin|aunt|uncle|"
    r"grandma|grandmother|grandpa|grandfather|roommate|girlfriend|boyfriend|"
    r"dog|cat|kid|child|neighbou?r|team|family"
)
ZH_REL = (
    "好朋友|男朋友|女朋友|妹妹|姐姐|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|老公|妻子|丈夫|"
    "儿子|女儿|朋友|同事|老板|经理|室友|邻居|狗|猫|孩子"
)
# 叫 names the word just before it: "我叫小王" is the user's name, "我妹妹叫小美"
# the sister's, and in "我养了只柯基叫馒头" or "新来的实习生叫小刘" it names a
# dog and an intern, not the user (who is merely in the sentence).
_ZH_NAMED = "|".join(
    f"(?<={who})" for who in ["我", "我的名字", "名字", *ZH_REL.split("|")]
)
_V = r"(?P<v>[^,.;!?]+)"  # an English value: up to the end of the clause
# A place may carry its region: "Portland, Oregon" is not "Portland, Maine".
_PLACE = r"(?P<v>[^,.;!?]+(?:,\s*[A-Z][a-z]+(?: [A-Z][a-z]+)?(?=\s*(?:$|[,.;!?])))?)"
# Where one moves to is a place: a name ("Denver", "the Bay Area") or a home
# ("a new flat", "the suburbs"). "We moved to a managed cluster" or "a new
# team" sets no residence.
_SOMEWHERE = (
    r"(?=(?:the\s+|a\s+|an\s+|my\s+|our\s+)?(?:(?-i:[A-Z\u00c0-\u00de])|"
    r"(?:(?:new|little|small|bigger|smaller|tiny|nicer|cheaper)\s+)?"
    r"(?:apartment|flat|house|home|place|city|town|village|country|suburbs?|"
    r"countryside|neighbou?rhood|area|coast|island|street|studio|condo)\b))"
)
# A Chinese value, shortest first; Latin words in it keep their spaces ("VS Code").
_ZV = r"(?P<v>(?:[\u4e00-\u9fffA-Za-z0-9]|(?<=[A-Za-z0-9]) (?=[A-Za-z0-9])){1,12}?)"
_ZEND = (
    r"(?=了|的|吧|啊|呢|，|,|。|！|!|？|\?|；|(?<![A-Za-z0-9])\s|\s(?![A-Za-z0-9])|"
    r"和|跟|上班|工作|$)"
)

# (attribute, pattern) in order; the first match in a clause is its slot.
EN: list[tuple[str, re.Pattern[str]]] = [
    (a, re.compile(p, re.I))
    for a, p in [
        ("name", rf"\b(?:name is|call me|i'm called|i am called|named) {_V}"),
        (
            "age",
            r"\b(?:i'm|i am|i turned|turned|is|am now|i'm now)\s+(?P<v>\d{1,3})"
            r"(?:\s*(?:years? old|yo))?\b",
        ),
        (
            "schedule",
            r"\b(?:my|the|our)\s+(?P<t>[\w-]+(?: [\w-]+)?)\s+(?:is|are|starts|"
            r"happens|moved|was moved|has moved|got moved|changed|is now)"
            r"\s+(?:now\s+)?(?:to\s+)?(?P<v>(?:on|at|every)\s+[^,.;!?]+|"
            r"\d[^,.;!?]*)",
        ),
        (
            "schedule",
            r"\bi (?:go to|do|have|attend)\s+(?P<t>[\w-]+(?: class)?)\s+"
            r"(?P<v>(?:on|every|at)\s+[^,.;!?]+)",
        ),
        (
            "commute",
            r"\b(?P<v>cycl\w*|bik\w*|driv\w*|walk\w*|ride (?:my|a) bike|"
            r"scoot\w*)\s+(?:to|into)\s+(?:work|the office|office|school|"
            r"campus|my job)",
        ),
        (
            "commute",
            rf"\b(?:commut\w*|go(?:es)? to work|get to work|travel to work)"
            rf"\s+(?:by|on|via)\s+{_V}",
        ),
        (
            "commute",
            r"\b(?:take|takes|taking|took|catch|catches|ride|rides|riding)\s+"
            r"(?P<v>(?:the |a |my )?[\w:.]*\s*(?:train|bus|subway|metro|tube|"
            r"tram|ferry|shuttle|bike|car|taxi|uber))\b",
        ),
        (
            "residence",
            rf"\b(?:live|lives|living|lived|reside\w*|based|settled)\s+"
            rf"(?:now\s+)?in\s+{_PLACE}",
        ),
        (
            "residence",
            rf"\b(?:moved|move|moving|relocated|relocating)\s+(?:back\s+)?"
            rf"(?:to|into)\s+{_SOMEWHERE}{_PLACE}",
        ),
        ("residence", rf"\b(?:home is in|my home is|i'm from|i am from)\s+{_PLACE}"),
        ("occupation", rf"\b(?:work|works|working|worked|job)\s+as\s+{_V}"),
        (
            "occupation",
            rf"\b(?:my job is|i became|became|retrained as|"
            rf"i'm now|i am now)\s+(?:an? )?{_V}",
        ),
        (
            "employer",
            rf"\b(?:work|works|working|worked|employed)\s+(?:at|for|by)\s+{_V}",
        ),
        (
            "employer",
            rf"\b(?:joined|join|started at|start at|got a job at|"
            rf"hired by|my employer is|my company is)\s+{_V}",
        ),
        (
            "diet",
            r"\b(?:i'm|i am|is|am|went|gone|became)\s+(?:now\s+|a\s+|fully\s+|not\s+|"
            r"no longer\s+|still\s+)*"
            r"(?P<v>vegetarian|vegan|pescatarian|keto|gluten-free|"
            r"dairy-free|omnivore)\b",
        ),
        (
            "likes",
            r"\b(?:i|we|he|she|they)\s+(?:really\s+|also\s+|still\s+|now\s+|"
            r"do\s+|don't\s+|do not\s+|didn't\s+|no longer\s+|never\s+|"
            r"actually\s+|kind of\s+|totally\s+|absolutely\s+|quite\s+)*(?:like|likes|love|loves|enjoy|enjoys|adore|prefer|"
            r"prefers|hate|hates|dislike|dislikes|can't stand|cannot stand)\s+"
            rf"{_V}",
        ),
        ("likes", rf"\b(?:fan of|into|fond of|tired of|sick of)\s+{_V}"),
        ("likes", rf"\bmy (?:favou?rite|fave) [\w ]{{1,20}}? (?:is|are)\s+{_V}"),
        (
            "likes",
            r"(?P<v>[\w. +#-]{2,40}?)\s+(?:is|are)\s+(?:totally\s+|actually\s+|"
            r"really\s+|now\s+|just\s+)*(?:fine|great|good|ok|okay|awesome|"
            r"terrible|awful|bad|overrated|the best|my favou?rite)\b",
        ),
        ("habit", r"\b(?P<v>smok(?:e|es|ing)|vap(?:e|es|ing))\b(?!d)"),
        ("drink", rf"\b(?:drink|drinks|drinking|sip)\s+{_V}"),
        (
            "drink",
            rf"\bmy (?:morning|usual|daily|go-to) (?:drink|coffee|tea) is\s+{_V}",
        ),
        ("food", rf"\b(?:eat|eats|eating)\s+{_V}"),
        (
            "uses",
            rf"\b(?:use|uses|using|code in|write in|program in|write|writes|"
            rf"writing)\s+{_V}",
        ),
        ("uses", rf"\bmy (?:editor|phone|laptop|browser|ide|os) is\s+{_V}"),
        (
            "studies",
            rf"\b(?:study|studies|studying|learn|learns|learning|major in|"
            rf"majoring in|taking classes in)\s+{_V}",
        ),
        ("speaks", rf"\b(?:speak|speaks|speaking)\s+{_V}"),
        ("plays", rf"\b(?:play|plays|playing)\s+{_V}"),
        (
            "pet",
            r"\b(?:have|has|got|adopted)\s+(?:a|an|two|three|\d+)\s+"
            r"(?:\w+\s+)?(?P<v>dogs?|cats?|puppy|kitten|parrot|rabbit|hamster|"
            r"fish|turtle)\b",
        ),
        (
            "switch",
            rf"\b(?:switched|switch|switching|changed|moved|went)\s+"
            rf"(?:over\s+|back\s+|on\s+)?to\s+{_V}",
        ),
        # What one has, orders or sticks to, read by the value's category
        # ("I have coffee in the afternoon" is a drink; "I have a meeting" nothing).
        (
            "switch",
            rf"\b(?:have|has|having|get|gets|order|orders|ordering|choose|pick|"
            rf"opt for|go for|went for|stick to|stick with|stuck with)\s+{_V}",
        ),
        (
            "stop",
            r"\b(?:gave up|give up|giving up|given up|quit|quitting|stopped|ditched|"
            r"dropped|kicked|cut out|done with|no longer|no more)\s+"
            r"(?!(?:at|by|in|for|to|on|with|off|here|there|it|that|this|them|him|her|"
            rf"me|us|you|now|today)\b){_V}",
        ),
    ]
]
ZH: list[tuple[str, re.Pattern[str]]] = [
    (a, re.compile(p))
    for a, p in [
        ("name", rf"(?:{_ZH_NAMED})(?:叫|名字是){_ZV}{_ZEND}"),
        ("age", r"(?P<v>\d{1,3})岁"),
        (
            "commute",
            r"(?P<v>骑自行车|骑电动车|骑车|开车|自驾|走路|步行|坐地铁|坐公交|"
            r"坐公交车|坐火车|坐高铁|打车|坐班车)(?:去|来)?(?:上班|通勤|去公司)",
        ),
        ("commute", r"(?:坐|乘|搭)(?P<v>地铁|公交车?|火车|高铁|班车|轮渡|出租车)"),
        (
            "commute",
            r"(?:通勤|上班)(?:是|靠|都)?(?P<v>骑车|开车|坐地铁|坐公交|步行|走路)",
        ),
        (
            "residence",
            rf"(?:住在|住|搬到了?|搬去了?|搬回了?|搬家到|定居在?|现居|家在)"
            rf"{_ZV}{_ZEND}",
        ),
        ("residence", rf"(?<![现正实存所好自])在{_ZV}(?:住|生活|定居){_ZEND}"),
        (
            "employer",
            rf"(?<![现正实存所好自])(?:在|去){_ZV}(?:工作|上班|任职|实习){_ZEND}",
        ),
        ("employer", rf"(?:入职了?|加入了?|跳槽到了?|跳槽去了?|就职于){_ZV}{_ZEND}"),
        (
            "occupation",
            r"(?:我是|他是|她是|当了?|做了?|职业是)(?:一名|一个|个)?"
            r"(?P<v>[\u4e00-\u9fff]{0,4}(?:师|员|生|家|工|医生|护士|经理|"
            r"老师|律师|司机|记者|作家|厨师|警察))",
        ),
        ("diet", r"(?P<v>吃素|素食|纯素|生酮)"),
        (
            "likes",
            rf"(?:不太?喜欢|喜欢|讨厌|爱上了?|爱|受不了|偏爱|迷上了?)(?:吃|喝|看|玩|听)?"
            rf"{_ZV}{_ZEND}",
        ),
        ("habit", r"(?P<v>抽烟|吸烟|抽电子烟)"),
        ("drink", rf"(?:喝){_ZV}{_ZEND}"),
        ("food", rf"(?:吃){_ZV}{_ZEND}"),
        ("uses", rf"(?:改用|换用|在用|用){_ZV}{_ZEND}"),
        ("studies", rf"(?:在学|学习|学|读|主修){_ZV}{_ZEND}"),
        ("speaks", r"(?:会说|会讲|说|讲)(?P<v>[\u4e00-\u9fff]{1,4}?(?:语|话|文))"),
        ("plays", rf"(?:会弹|在弹|弹|打|踢|玩){_ZV}{_ZEND}"),
        ("pet", r"养了?(?:一|两|三|\d)?(?:只|条|个)?(?P<v>狗|猫|兔子|鹦鹉|仓鼠|鱼)"),
        (
            "schedule",
            r"(?P<t>[\u4e00-\u9fff]{2,4}?)(?:改到了?|改成了?|挪到了?|调到了?|是|在)"
            r"(?P<v>(?:每周|周|星期|礼拜|每天|早上|上午|下午|晚上)"
            r"[\u4e00-\u9fff0-9:点半]{0,6})",
        ),
        ("switch", rf"(?:换成了?|改成了?|改为|换了|换到了?|换用){_ZV}{_ZEND}"),
        ("stop", rf"(?:戒掉了?|戒了|戒|不再){_ZV}{_ZEND}"),
    ]
]
