/*
 * The TFLite operator table used by the importer: builtin operator names
 * (schema.fbs BuiltinOperator), which BuiltinOptions table each operator
 * carries, and how the options' fields become node attributes.
 */
#ifndef SY_TFLITE_OPS_H
#define SY_TFLITE_OPS_H

#include <stddef.h>
#include <stdint.h>

enum {
    TFL_OP_CUSTOM = 32,
    TFL_OP_DELEGATE = 51,
    TFL_OP_PLACEHOLDER_FOR_GREATER_OP_CODES = 127
};

typedef enum tfl_field_kind {
    TFL_F_BOOL,     /* bool -> INT 0/1 */
    TFL_F_I32,      /* int -> INT */
    TFL_F_F32,      /* float -> FLOAT */
    TFL_F_ACT,      /* ActivationFunctionType -> STRING */
    TFL_F_PADDING,  /* Padding -> STRING */
    TFL_F_TTYPE,    /* TensorType -> STRING */
    TFL_F_I32VEC,   /* [int] -> INTS */
    TFL_F_MIRROR,   /* MirrorPadMode -> STRING */
    TFL_F_WFORMAT,  /* FullyConnectedOptionsWeightsFormat -> STRING */
    TFL_F_LSTMKIND  /* LSTMKernelType -> STRING */
} tfl_field_kind;

typedef struct tfl_field {
    uint8_t id;          /* field id in the options table */
    uint8_t kind;        /* tfl_field_kind */
    const char *name;    /* attribute name (schema.fbs field name) */
    double def;          /* default when absent (numbers and enum values) */
} tfl_field;

typedef struct tfl_op_desc {
    int32_t code;         /* BuiltinOperator */
    uint8_t options_type; /* BuiltinOptions union type; 0 = none */
    const char *options_name;
    const tfl_field *fields;
    uint32_t n_fields;
} tfl_op_desc;

/* Builtin name for a code ("" when the code is unknown to this build). */
const char *tfl_op_name(int32_t code);
/* Options description of a code, NULL when it takes no options this build decodes. */
const tfl_op_desc *tfl_op_desc_of(int32_t code);
/* Enum value names (NULL when out of range). */
const char *tfl_act_name(int v);
const char *tfl_padding_name(int v);
const char *tfl_ttype_name(int v);
const char *tfl_mirror_name(int v);
const char *tfl_wformat_name(int v);
const char *tfl_lstmkind_name(int v);

#endif
