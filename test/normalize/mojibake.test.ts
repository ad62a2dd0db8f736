/**
 * The marks of text read in the wrong charset: natural writing in many scripts has none of them,
 * and the readings a sibling charset gives of it have them.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { looksMisdecoded } from "../../src/normalize/mojibake.js";

const iconv = createRequire(import.meta.url)("iconv-lite") as typeof import("iconv-lite");

const NATURAL = [
  "Le cœur a ses raisons. Où est passé l’été ? « élève », «élève», 12 € le kilo, 20 °C, 5 m².",
  "Über den Wolken muss die Freiheit wohl grenzenlos sein. Größere Straßen, §§ 823 ff. BGB.",
  "El niño comió una manzana. ¿Dónde está la estación? ¡Qué aventura!",
  "Příliš žluťoučký kůň úpěl ďábelské ódy. Zażółć gęślą jaźń.",
  "Все люди рождаются свободными и равными. Ёлка, №5, ЮНЕСКО, СССР.",
  "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι· ΟΗΕ.",
  "כל בני אדם נולדו בני חורין. צה״ל, ת״א.",
  "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق.",
  "Bütün insanlar hür, haysiyet ve haklar bakımından eşit doğarlar. İstanbul'da.",
  "word—word, well‑known, l·lamp, naïve café, Ærøskøbing, ÉTÉ.",
];

describe("looksMisdecoded", () => {
  it("natural text in many scripts does not look misdecoded", () => {
    for (const text of NATURAL) expect(looksMisdecoded(text), text).toBe(false);
  });

  it("the reading a sibling charset gives of natural text does", () => {
    const misread: [string, string, string][] = [
      ["Le cœur a ses raisons.", "iso-8859-15", "iso-8859-1"], // c½ur
      ["Größere Straßen", "macintosh", "windows-1252"], // Grš§ere
      ["Größere Straßen", "windows-1252", "macintosh"], // Grˆflere
      ["Où est passé l’été", "windows-1252", "cp850"],
      ["Все люди рождаются", "maccyrillic", "windows-1251"], // ‚се … рождаютсЯ
      ["Все люди рождаются", "windows-1251", "maccyrillic"], // ¬се … рождаютс¤
      ["Все люди рождаются", "koi8-r", "cp866"], // box drawing against letters
      ["Příliš žluťoučký kůň", "iso-8859-2", "windows-1250"], // žlu»oučký
      ["يولد جميع الناس", "iso-8859-6", "windows-1256"], // Latin letters inside Arabic words
    ];
    for (const [text, real, read] of misread) {
      const reading = iconv.decode(iconv.encode(text, real), read);
      expect(reading, `${real} read as ${read}`).not.toBe(text);
      expect(looksMisdecoded(reading), `${real} read as ${read}: ${reading}`).toBe(true);
    }
  });

  it("ASCII is never judged (code writes a+b, x|y and camelCase on purpose)", () => {
    expect(looksMisdecoded("a+b x|y a^b camelCase iPhone a~b")).toBe(false);
  });
});
