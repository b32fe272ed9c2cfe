// Syntax colours with at least 4.5:1 contrast on the editor's background and its
// active-line tint (CodeMirror's default style has lighter ones that fail WCAG AA).
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';

const style = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.moduleKeyword, t.operatorKeyword, t.definitionKeyword], color: '#7a1fa2' },
  { tag: [t.tagName, t.angleBracket], color: '#116329' },
  { tag: [t.attributeName, t.className, t.labelName], color: '#8a4600' },
  { tag: [t.string, t.special(t.string), t.regexp], color: '#a31515' },
  { tag: [t.number, t.bool, t.atom, t.unit, t.color, t.constant(t.name)], color: '#0550ae' },
  { tag: [t.propertyName, t.function(t.variableName), t.definition(t.variableName)], color: '#0550ae' },
  { tag: [t.typeName, t.namespace], color: '#6639ba' },
  {
    tag: [t.comment, t.lineComment, t.blockComment, t.meta, t.processingInstruction, t.documentMeta],
    color: '#57606a',
    fontStyle: 'italic',
  },
  { tag: [t.variableName, t.operator, t.punctuation, t.bracket, t.brace, t.separator, t.content], color: '#1b1f24' },
  { tag: t.invalid, color: '#a40e26' },
  { tag: t.heading, fontWeight: 'bold', color: '#1b1f24' },
  { tag: t.link, color: '#0550ae', textDecoration: 'underline' },
]);

export const accessibleHighlighting = syntaxHighlighting(style);
