//===- Parser.cpp - lexer and parser for .qk descriptions
//-------------------===//
//
// Part of the quack project.
//
// Grammar:
//   file     := kernel*
//   kernel   := 'kernel' IDENT ('<' generic (',' generic)* '>')?
//               '(' params? ')' '->' '(' params ')' '{' stmt* '}'
//   generic  := IDENT (':' 'bool')?
//   params   := param (',' param)*
//   param    := IDENT ':' IDENT ('[' dim (',' dim)* ']')? ('if' cond)?
//   cond     := '!'? IDENT
//   dim      := IDENT | INT
//   stmt     := IDENT '=' expr ';'?
//             | 'if' cond '{' stmt* '}' ('else' '{' stmt* '}')?
//   expr     := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
//   sum      := term (('+' | '-') term)*
//   term     := unary (('*' | '/') unary)*
//   unary    := '-' unary | primary
//   primary  := NUMBER | IDENT | IDENT '[' expr ']'
//             | IDENT '(' expr (',' expr)* ')' | '(' expr ')'
// Comments run from '#' or '//' to the end of the line.
//
//===----------------------------------------------------------------------===//

#include "quack/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace quack;
using namespace quack::qk;

namespace {

enum class Tok {
  Eof,
  Error,
  Ident,
  Number,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Less,
  Greater,
  LessEq,
  GreaterEq,
  EqEq,
  NotEq,
  Bang,
  Comma,
  Colon,
  Semi,
  Equal,
  Arrow,
  Plus,
  Minus,
  Star,
  Slash
};

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text;
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(text.data()); }
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer)
      : cur(buffer.begin()), end(buffer.end()) {}

  Token next() {
    skipSpaceAndComments();
    const char *start = cur;
    if (cur == end)
      return make(Tok::Eof, start);
    char c = *cur++;
    if (llvm::isAlpha(c) || c == '_') {
      while (cur != end && (llvm::isAlnum(*cur) || *cur == '_'))
        ++cur;
      return make(Tok::Ident, start);
    }
    if (llvm::isDigit(c) || (c == '.' && cur != end && llvm::isDigit(*cur))) {
      while (cur != end && (llvm::isDigit(*cur) || *cur == '.'))
        ++cur;
      if (cur != end && (*cur == 'e' || *cur == 'E')) {
        const char *save = cur++;
        if (cur != end && (*cur == '+' || *cur == '-'))
          ++cur;
        if (cur == end || !llvm::isDigit(*cur))
          cur = save;
        while (cur != end && llvm::isDigit(*cur))
          ++cur;
      }
      return make(Tok::Number, start);
    }
    switch (c) {
    case '(':
      return make(Tok::LParen, start);
    case ')':
      return make(Tok::RParen, start);
    case '[':
      return make(Tok::LBracket, start);
    case ']':
      return make(Tok::RBracket, start);
    case '{':
      return make(Tok::LBrace, start);
    case '}':
      return make(Tok::RBrace, start);
    case '<':
      if (cur != end && *cur == '=')
        return ++cur, make(Tok::LessEq, start);
      return make(Tok::Less, start);
    case '>':
      if (cur != end && *cur == '=')
        return ++cur, make(Tok::GreaterEq, start);
      return make(Tok::Greater, start);
    case '!':
      if (cur != end && *cur == '=')
        return ++cur, make(Tok::NotEq, start);
      return make(Tok::Bang, start);
    case ',':
      return make(Tok::Comma, start);
    case ':':
      return make(Tok::Colon, start);
    case ';':
      return make(Tok::Semi, start);
    case '=':
      if (cur != end && *cur == '=')
        return ++cur, make(Tok::EqEq, start);
      return make(Tok::Equal, start);
    case '+':
      return make(Tok::Plus, start);
    case '*':
      return make(Tok::Star, start);
    case '/':
      return make(Tok::Slash, start);
    case '-':
      if (cur != end && *cur == '>') {
        ++cur;
        return make(Tok::Arrow, start);
      }
      return make(Tok::Minus, start);
    default:
      return make(Tok::Error, start);
    }
  }

private:
  Token make(Tok kind, const char *start) {
    return Token{kind, llvm::StringRef(start, cur - start)};
  }
  void skipSpaceAndComments() {
    while (cur != end) {
      if (llvm::isSpace(*cur)) {
        ++cur;
      } else if (*cur == '#' ||
                 (*cur == '/' && cur + 1 != end && cur[1] == '/')) {
        while (cur != end && *cur != '\n')
          ++cur;
      } else {
        break;
      }
    }
  }
  const char *cur;
  const char *end;
};

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr, unsigned bufferId,
         mlir::MLIRContext *context)
      : sourceMgr(sourceMgr), bufferId(bufferId), context(context),
        lexer(sourceMgr.getMemoryBuffer(bufferId)->getBuffer()) {
    tok = lexer.next();
  }

  std::optional<File> parseFile() {
    File file;
    while (tok.kind != Tok::Eof) {
      auto kernel = parseKernel();
      if (!kernel)
        return std::nullopt;
      file.kernels.push_back(std::move(*kernel));
    }
    if (file.kernels.empty()) {
      error(tok.loc(), "expected 'kernel': the file declares no kernel");
      return std::nullopt;
    }
    return file;
  }

private:
  mlir::Location loc(llvm::SMLoc at) {
    auto [line, col] = sourceMgr.getLineAndColumn(at, bufferId);
    llvm::StringRef file =
        sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
    return mlir::FileLineColLoc::get(context, file, line, col);
  }
  void error(llvm::SMLoc at, const llvm::Twine &message) {
    mlir::emitError(loc(at)) << message.str();
  }

  /// Nesting limit for expressions (operators, parentheses, calls) and 'if'
  /// blocks: parsing, IR building and destroying the AST recurse over it,
  /// and thousands of levels overflow the stack.
  static constexpr unsigned kMaxNesting = 256;
  unsigned nesting = 0;
  /// Restores `nesting` when a parse function returns.
  struct NestingScope {
    unsigned &nesting;
    unsigned saved;
    explicit NestingScope(unsigned &n) : nesting(n), saved(n) {}
    ~NestingScope() { nesting = saved; }
  };
  /// One level deeper; an error when past the limit.
  bool deeper() {
    if (++nesting <= kMaxNesting)
      return true;
    error(tok.loc(), "nested too deeply (more than " +
                         llvm::Twine(kMaxNesting) +
                         " levels of operators, parentheses or blocks)");
    return false;
  }
  std::string describe(const Token &t) {
    switch (t.kind) {
    case Tok::Eof:
      return "end of file";
    case Tok::Error:
      return "invalid character '" + t.text.str() + "'";
    default:
      return "'" + t.text.str() + "'";
    }
  }
  void consume() { tok = lexer.next(); }
  bool expect(Tok kind, llvm::StringRef what) {
    if (tok.kind == kind) {
      consume();
      return true;
    }
    error(tok.loc(), "expected " + what + ", found " + describe(tok));
    return false;
  }
  bool expectIdent(std::string &out, llvm::SMLoc &at, llvm::StringRef what) {
    if (tok.kind != Tok::Ident) {
      error(tok.loc(), "expected " + what + ", found " + describe(tok));
      return false;
    }
    out = tok.text.str();
    at = tok.loc();
    consume();
    return true;
  }

  std::optional<Kernel> parseKernel() {
    Kernel kernel;
    if (tok.kind != Tok::Ident || tok.text != "kernel") {
      error(tok.loc(), "expected 'kernel', found " + describe(tok));
      return std::nullopt;
    }
    consume();
    if (!expectIdent(kernel.name, kernel.loc, "a kernel name"))
      return std::nullopt;
    if (tok.kind == Tok::Less) {
      consume();
      do {
        GenericParam g;
        if (!expectIdent(g.name, g.loc, "a compile-time parameter name"))
          return std::nullopt;
        if (tok.kind == Tok::Colon) {
          consume();
          if (tok.kind != Tok::Ident || tok.text != "bool") {
            error(tok.loc(), "expected 'bool' (a compile-time flag), found " +
                                 describe(tok));
            return std::nullopt;
          }
          consume();
          g.isFlag = true;
        }
        kernel.generics.push_back(g);
      } while (tok.kind == Tok::Comma && (consume(), true));
      if (!expect(Tok::Greater, "',' or '>'"))
        return std::nullopt;
    }
    if (!expect(Tok::LParen, "'(' before the inputs"))
      return std::nullopt;
    if (tok.kind != Tok::RParen && !parseParams(kernel, /*isOutput=*/false))
      return std::nullopt;
    if (!expect(Tok::RParen, "',' or ')' after the inputs") ||
        !expect(Tok::Arrow, "'->' before the outputs") ||
        !expect(Tok::LParen, "'(' before the outputs") ||
        !parseParams(kernel, /*isOutput=*/true) ||
        !expect(Tok::RParen, "',' or ')' after the outputs") ||
        !expect(Tok::LBrace, "'{' to open the kernel body"))
      return std::nullopt;
    if (!parseBlock(kernel.body, "kernel '" + kernel.name + "'"))
      return std::nullopt;
    return kernel;
  }

  /// Parses statements up to and including the closing '}'.
  bool parseBlock(std::vector<Stmt> &body, const std::string &what) {
    NestingScope scope(nesting);
    if (!deeper())
      return false;
    while (tok.kind != Tok::RBrace) {
      if (tok.kind == Tok::Eof) {
        error(tok.loc(),
              "expected '}' to close " + what + ", found end of file");
        return false;
      }
      Stmt stmt;
      if (tok.kind == Tok::Ident && tok.text == "if") {
        consume();
        if (!parseCondition(stmt.condition) ||
            !expect(Tok::LBrace, "'{' after the condition") ||
            !parseBlock(stmt.thenBody, "the 'if' block"))
          return false;
        if (tok.kind == Tok::Ident && tok.text == "else") {
          consume();
          if (!expect(Tok::LBrace, "'{' after 'else'") ||
              !parseBlock(stmt.elseBody, "the 'else' block"))
            return false;
        }
        body.push_back(std::move(stmt));
        continue;
      }
      if (!expectIdent(stmt.target, stmt.loc,
                       "a statement 'name = expression'"))
        return false;
      if (!expect(Tok::Equal, "'=' after '" + stmt.target + "'"))
        return false;
      stmt.value = parseExpr();
      if (!stmt.value)
        return false;
      if (tok.kind == Tok::Semi)
        consume();
      body.push_back(std::move(stmt));
    }
    consume();
    return true;
  }

  /// cond := '!'? IDENT
  bool parseCondition(Condition &cond) {
    cond.loc = tok.loc();
    if (tok.kind == Tok::Bang) {
      cond.negated = true;
      consume();
    }
    llvm::SMLoc at;
    return expectIdent(cond.flag, at, "a compile-time flag");
  }

  bool parseParams(Kernel &kernel, bool isOutput) {
    do {
      Param p;
      p.isOutput = isOutput;
      if (!expectIdent(p.name, p.loc, "an argument name") ||
          !expect(Tok::Colon, "':' after '" + p.name + "'") ||
          !expectIdent(p.type.element, p.type.elementLoc, "an element type"))
        return false;
      if (tok.kind == Tok::LBracket) {
        consume();
        do {
          TypeRef::Dim dim;
          dim.loc = tok.loc();
          if (tok.kind == Tok::Ident) {
            dim.name = tok.text.str();
          } else if (tok.kind == Tok::Number &&
                     !tok.text.getAsInteger(10, dim.value)) {
          } else {
            error(tok.loc(), "expected a dimension (a name or an integer), "
                             "found " +
                                 describe(tok));
            return false;
          }
          consume();
          p.type.shape.push_back(dim);
        } while (tok.kind == Tok::Comma && (consume(), true));
        if (!expect(Tok::RBracket, "',' or ']'"))
          return false;
      }
      if (tok.kind == Tok::Ident && tok.text == "if") {
        consume();
        if (!parseCondition(p.condition))
          return false;
      }
      kernel.params.push_back(std::move(p));
    } while (tok.kind == Tok::Comma && (consume(), true));
    return true;
  }

  std::unique_ptr<Expr> parseExpr() {
    NestingScope scope(nesting);
    if (!deeper())
      return nullptr;
    auto lhs = parseSum();
    if (!lhs)
      return nullptr;
    switch (tok.kind) {
    case Tok::Less:
    case Tok::LessEq:
    case Tok::Greater:
    case Tok::GreaterEq:
    case Tok::EqEq:
    case Tok::NotEq: {
      auto e = std::make_unique<Expr>(Expr::Kind::Compare, tok.loc());
      e->compare = tok.text.str();
      consume();
      auto rhs = parseSum();
      if (!rhs)
        return nullptr;
      e->operands.push_back(std::move(lhs));
      e->operands.push_back(std::move(rhs));
      return e;
    }
    default:
      return lhs;
    }
  }

  std::unique_ptr<Expr> parseSum() {
    return parseLeftAssociative(Tok::Plus, Tok::Minus,
                                [this] { return parseTerm(); });
  }

  std::unique_ptr<Expr> parseTerm() {
    return parseLeftAssociative(Tok::Star, Tok::Slash,
                                [this] { return parseUnary(); });
  }

  /// operand ((first | second) operand)*, folded to the left.
  std::unique_ptr<Expr>
  parseLeftAssociative(Tok first, Tok second,
                       llvm::function_ref<std::unique_ptr<Expr>()> operand) {
    NestingScope scope(nesting);
    auto lhs = operand();
    while (lhs && (tok.kind == first || tok.kind == second)) {
      auto e = std::make_unique<Expr>(Expr::Kind::Binary, tok.loc());
      e->op = tok.text[0];
      if (!deeper())
        return nullptr;
      consume();
      auto rhs = operand();
      if (!rhs)
        return nullptr;
      e->operands.push_back(std::move(lhs));
      e->operands.push_back(std::move(rhs));
      lhs = std::move(e);
    }
    return lhs;
  }

  std::unique_ptr<Expr> parseUnary() {
    NestingScope scope(nesting);
    if (tok.kind == Tok::Minus) {
      if (!deeper())
        return nullptr;
      auto e = std::make_unique<Expr>(Expr::Kind::Unary, tok.loc());
      e->op = '-';
      consume();
      auto operand = parseUnary();
      if (!operand)
        return nullptr;
      e->operands.push_back(std::move(operand));
      return e;
    }
    return parsePrimary();
  }

  std::unique_ptr<Expr> parsePrimary() {
    if (tok.kind == Tok::Number) {
      auto e = std::make_unique<Expr>(Expr::Kind::Number, tok.loc());
      if (!llvm::to_float(tok.text, e->number)) {
        error(tok.loc(), "malformed number '" + tok.text.str() + "'");
        return nullptr;
      }
      e->isInteger = tok.text.find_first_of(".eE") == llvm::StringRef::npos;
      consume();
      return e;
    }
    if (tok.kind == Tok::LParen) {
      consume();
      auto e = parseExpr();
      if (!e || !expect(Tok::RParen, "')'"))
        return nullptr;
      return e;
    }
    if (tok.kind == Tok::Ident) {
      llvm::SMLoc at = tok.loc();
      std::string name = tok.text.str();
      consume();
      if (tok.kind == Tok::LBracket) {
        consume();
        auto e = std::make_unique<Expr>(Expr::Kind::Index, at);
        e->name = name;
        auto index = parseExpr();
        if (!index || !expect(Tok::RBracket, "']' after the index"))
          return nullptr;
        e->operands.push_back(std::move(index));
        return e;
      }
      if (tok.kind != Tok::LParen) {
        auto e = std::make_unique<Expr>(Expr::Kind::Name, at);
        e->name = name;
        return e;
      }
      consume();
      auto e = std::make_unique<Expr>(Expr::Kind::Call, at);
      e->name = name;
      if (tok.kind != Tok::RParen) {
        do {
          auto arg = parseExpr();
          if (!arg)
            return nullptr;
          e->operands.push_back(std::move(arg));
        } while (tok.kind == Tok::Comma && (consume(), true));
      }
      if (!expect(Tok::RParen,
                  "',' or ')' to close the call to '" + name + "'"))
        return nullptr;
      return e;
    }
    error(tok.loc(), "expected an expression, found " + describe(tok));
    return nullptr;
  }

  llvm::SourceMgr &sourceMgr;
  unsigned bufferId;
  mlir::MLIRContext *context;
  Lexer lexer;
  Token tok;
};

} // namespace

std::optional<File> quack::parseKernelFile(llvm::SourceMgr &sourceMgr,
                                           unsigned bufferId,
                                           mlir::MLIRContext *context) {
  return Parser(sourceMgr, bufferId, context).parseFile();
}
