//! A small XML reader for `anchor.xml`: elements with their attributes, child elements
//! and text, kept in one arena (no recursion, so a deeply nested input cannot overflow
//! the stack). Comments, processing instructions, DOCTYPE and CDATA are understood;
//! namespaces and entity declarations are not (anchor.xml uses none).

/// One element. `children` index into [`Doc::nodes`].
#[derive(Debug, Default)]
pub struct Node {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<usize>,
    pub text: String,
}

impl Node {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Doc {
    pub nodes: Vec<Node>,
}

impl Doc {
    /// The root element (index 0).
    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// The child elements of `n` named `name`, in order.
    pub fn kids<'a>(&'a self, n: usize, name: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.nodes[n]
            .children
            .iter()
            .copied()
            .filter(move |&c| self.nodes[c].name == name)
    }

    /// The first child element of `n` named `name`.
    pub fn kid(&self, n: usize, name: &str) -> Option<usize> {
        self.kids(n, name).next()
    }

    /// The text of the first child element of `n` named `name`, trimmed ("" if none).
    pub fn text_of(&self, n: usize, name: &str) -> &str {
        self.kid(n, name)
            .map(|c| self.nodes[c].text.trim())
            .unwrap_or("")
    }
}

fn line_of(s: &[u8], pos: usize) -> usize {
    1 + s[..pos.min(s.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

fn find(s: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    memchr::memmem::find(s.get(from..)?, pat).map(|i| from + i)
}

use crate::readers::xml_entities::unescape;

fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'.' | b'-') || c >= 0x80
}

/// Parses a start tag's name and attributes from `s[pos..]` (just after `<`); returns
/// the node, whether it closes itself, and the position after `>`.
fn start_tag(s: &[u8], mut pos: usize) -> Result<(Node, bool, usize), String> {
    let err = |p: usize, m: &str| format!("anchor.xml: line {}: {m}", line_of(s, p));
    let start = pos;
    while pos < s.len() && is_name(s[pos]) {
        pos += 1;
    }
    if pos == start {
        return Err(err(pos, "a tag without a name"));
    }
    let mut node = Node {
        name: String::from_utf8_lossy(&s[start..pos]).into_owned(),
        ..Node::default()
    };
    loop {
        while pos < s.len() && s[pos].is_ascii_whitespace() {
            pos += 1;
        }
        match s.get(pos) {
            None => return Err(err(pos, "a tag runs to the end of the file")),
            Some(b'>') => return Ok((node, false, pos + 1)),
            Some(b'/') if s.get(pos + 1) == Some(&b'>') => return Ok((node, true, pos + 2)),
            _ => {}
        }
        let k0 = pos;
        while pos < s.len() && is_name(s[pos]) {
            pos += 1;
        }
        if k0 == pos {
            return Err(err(pos, "a malformed attribute"));
        }
        let key = String::from_utf8_lossy(&s[k0..pos]).into_owned();
        while pos < s.len() && s[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if s.get(pos) != Some(&b'=') {
            return Err(err(pos, "an attribute without a value"));
        }
        pos += 1;
        while pos < s.len() && s[pos].is_ascii_whitespace() {
            pos += 1;
        }
        let q = *s
            .get(pos)
            .ok_or_else(|| err(pos, "a tag runs to the end"))?;
        if q != b'"' && q != b'\'' {
            return Err(err(pos, "an unquoted attribute value"));
        }
        let end = memchr::memchr(q, &s[pos + 1..])
            .map(|i| pos + 1 + i)
            .ok_or_else(|| err(pos, "an attribute value without its closing quote"))?;
        let v = unescape(&String::from_utf8_lossy(&s[pos + 1..end]));
        node.attrs.push((key, v));
        pos = end + 1;
    }
}

/// Parses the document. Errors name the line.
pub fn parse(s: &[u8]) -> Result<Doc, String> {
    let s = s.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(s);
    let err = |p: usize, m: &str| format!("anchor.xml: line {}: {m}", line_of(s, p));
    let mut nodes: Vec<Node> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut pos = 0;
    let mut closed_root = false;
    while pos < s.len() {
        let Some(lt) = memchr::memchr(b'<', &s[pos..]).map(|i| pos + i) else {
            break;
        };
        if let Some(&top) = open.last() {
            let text = String::from_utf8_lossy(&s[pos..lt]);
            nodes[top].text.push_str(&unescape(&text));
        }
        let rest = &s[lt..];
        if rest.starts_with(b"<!--") {
            pos = find(s, lt + 4, b"-->").ok_or_else(|| err(lt, "an unclosed comment"))? + 3;
        } else if rest.starts_with(b"<![CDATA[") {
            let end = find(s, lt + 9, b"]]>").ok_or_else(|| err(lt, "an unclosed CDATA"))?;
            if let Some(&top) = open.last() {
                nodes[top]
                    .text
                    .push_str(&String::from_utf8_lossy(&s[lt + 9..end]));
            }
            pos = end + 3;
        } else if rest.starts_with(b"<?") {
            pos = find(s, lt + 2, b"?>").ok_or_else(|| err(lt, "an unclosed <?"))? + 2;
        } else if rest.starts_with(b"<!") {
            pos = find(s, lt + 2, b">").ok_or_else(|| err(lt, "an unclosed <!"))? + 1;
        } else if rest.starts_with(b"</") {
            let gt = find(s, lt, b">").ok_or_else(|| err(lt, "an unclosed end tag"))?;
            let name = String::from_utf8_lossy(&s[lt + 2..gt]);
            let top = open
                .pop()
                .ok_or_else(|| err(lt, "an end tag without a start"))?;
            if nodes[top].name != name.trim() {
                return Err(err(
                    lt,
                    &format!("</{}> closes <{}>", name.trim(), nodes[top].name),
                ));
            }
            closed_root |= open.is_empty();
            pos = gt + 1;
        } else {
            if closed_root || open.is_empty() && !nodes.is_empty() {
                return Err(err(lt, "a second root element"));
            }
            let (node, empty, next) = start_tag(s, lt + 1)?;
            let id = nodes.len();
            if let Some(&top) = open.last() {
                nodes[top].children.push(id);
            }
            nodes.push(node);
            if empty {
                closed_root |= open.is_empty();
            } else {
                open.push(id);
            }
            pos = next;
        }
    }
    if let Some(&top) = open.last() {
        return Err(format!(
            "anchor.xml: <{}> is not closed (the file is cut short?)",
            nodes[top].name
        ));
    }
    if nodes.is_empty() {
        return Err("anchor.xml: no element".into());
    }
    Ok(Doc { nodes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_attributes_and_text() {
        let d = parse(
            b"<?xml version=\"1.0\"?>\n<!-- c --><cube a='1'><name>x &lt; y</name><e k=\"&quot;\"/><![CDATA[<z>]]></cube>",
        )
        .unwrap();
        assert_eq!(d.root().name, "cube");
        assert_eq!(d.root().attr("a"), Some("1"));
        assert_eq!(d.text_of(0, "name"), "x < y");
        assert_eq!(d.nodes[d.kid(0, "e").unwrap()].attr("k"), Some("\""));
        assert!(d.root().text.contains("<z>"));
    }

    #[test]
    fn malformed_documents_are_errors() {
        for bad in [
            &b"<a><b></a>"[..],
            b"<a>",
            b"<a x=1/>",
            b"",
            b"<a/><b/>",
            b"<a><!-- x",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(unescape("&#65;&#x42;&bogus;&"), "AB&bogus;&");
    }
}
