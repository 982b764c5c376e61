//===- EnumKeyword.h - enum attributes as bare op keywords ------*- C++ -*-===//
//
// Internal to StrataIR: the `custom<EnumKeyword>($attr)` directive of the op
// assembly formats. An enum attribute's own printer starts with a space (it
// follows the mnemonic in `#strata<rope_pairing neox>`), which the op printer
// would double; this directive prints and parses the keyword alone.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_IR_ENUMKEYWORD_H
#define STRATA_IR_ENUMKEYWORD_H

#include "ir/StrataTypes.h"

#include "mlir/IR/OpImplementation.h"

namespace strata {

template <typename EnumAttrT>
mlir::ParseResult parseEnumKeyword(mlir::OpAsmParser &parser, EnumAttrT &attr) {
  using EnumT = decltype(std::declval<EnumAttrT>().getValue());
  llvm::SMLoc loc = parser.getCurrentLocation();
  llvm::StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return mlir::failure();
  std::optional<EnumT> value = symbolizeEnum<EnumT>(keyword);
  if (!value)
    return parser.emitError(loc)
           << "unknown " << EnumAttrT::getMnemonic() << " '" << keyword << "'";
  attr = EnumAttrT::get(parser.getContext(), *value);
  return mlir::success();
}

template <typename EnumAttrT>
void printEnumKeyword(mlir::OpAsmPrinter &printer, mlir::Operation *,
                      EnumAttrT attr) {
  printer << stringifyEnum(attr.getValue());
}

} // namespace strata

#endif // STRATA_IR_ENUMKEYWORD_H
