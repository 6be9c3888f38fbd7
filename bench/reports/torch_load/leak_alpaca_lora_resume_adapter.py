# Source: https://github.com/tloen/alpaca-lora/blob/8bb8579e403dc78e37fe81ffbb253c413007323f/finetune.py
# Report: finetune.py resumes LoRA training under torchrun by torch.load()-ing pytorch_model.bin / adapter_model.bin with no map_location; every rank deserializes the adapter onto the GPU it was saved from (cuda:0), users patched in map_location (resume block; discussed in https://github.com/tloen/alpaca-lora/issues/369)
# Shape: resume helper picks the checkpoint file, loads it with bare torch.load and hands the dict to set_peft_model_state_dict, then Trainer runs
# Expect: TML011 line 27
import os

import torch
import transformers
from peft import LoraConfig, get_peft_model, prepare_model_for_int8_training, set_peft_model_state_dict
from transformers import LlamaForCausalLM, LlamaTokenizer


def find_resume_weights(resume_from_checkpoint):
    checkpoint_name = os.path.join(resume_from_checkpoint, "pytorch_model.bin")  # full checkpoint
    if not os.path.exists(checkpoint_name):
        checkpoint_name = os.path.join(resume_from_checkpoint, "adapter_model.bin")  # only LoRA
        resume_from_checkpoint = False  # so the trainer won't try loading its state
    return checkpoint_name, resume_from_checkpoint


def maybe_resume(model, resume_from_checkpoint):
    if not resume_from_checkpoint:
        return model, resume_from_checkpoint
    checkpoint_name, resume_from_checkpoint = find_resume_weights(resume_from_checkpoint)
    if os.path.exists(checkpoint_name):
        print(f"Restarting from {checkpoint_name}")
        adapters_weights = torch.load(checkpoint_name)  # expect: TML011
        set_peft_model_state_dict(model, adapters_weights)
    else:
        print(f"Checkpoint {checkpoint_name} not found")
    return model, resume_from_checkpoint


def train(base_model, train_data, val_data, output_dir="./lora-alpaca", micro_batch_size=4,
          gradient_accumulation_steps=32, resume_from_checkpoint=None):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)} if world_size != 1 else "auto"
    model = LlamaForCausalLM.from_pretrained(base_model, load_in_8bit=True,
                                             torch_dtype=torch.float16, device_map=device_map)
    tokenizer = LlamaTokenizer.from_pretrained(base_model)
    tokenizer.pad_token_id = 0
    model = prepare_model_for_int8_training(model)
    config = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                        lora_dropout=0.05, bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    model, resume_from_checkpoint = maybe_resume(model, resume_from_checkpoint)
    model.print_trainable_parameters()

    trainer = transformers.Trainer(
        model=model,
        train_dataset=train_data,
        eval_dataset=val_data,
        args=transformers.TrainingArguments(
            per_device_train_batch_size=micro_batch_size,
            gradient_accumulation_steps=gradient_accumulation_steps,
            warmup_steps=100, num_train_epochs=3, learning_rate=3e-4, fp16=True,
            logging_steps=10, optim="adamw_torch", save_strategy="steps", save_steps=200,
            output_dir=output_dir, save_total_limit=3,
            ddp_find_unused_parameters=False if world_size != 1 else None,
        ),
        data_collator=transformers.DataCollatorForSeq2Seq(
            tokenizer, pad_to_multiple_of=8, return_tensors="pt", padding=True
        ),
    )
    model.config.use_cache = False
    trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    model.save_pretrained(output_dir)
