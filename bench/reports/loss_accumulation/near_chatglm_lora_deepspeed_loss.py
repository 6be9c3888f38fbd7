# Source: https://github.com/liucongg/ChatGLM-Finetuning/blob/e13710cb3cc0ffd1fb669ac862f4b1b4770c8172/finetuning_lora.py
# Report: audited LoRA (peft) + DeepSpeed fine-tuning loop for ChatGLM-6B; the repository only prints float(loss.item()) every log_steps; this rewrite keeps a running epoch loss for the log line, as many LoRA scripts do
# Shape: same running epoch loss, accumulated the way the peft examples do it (`tr_loss += loss.detach().float()`): a detached device scalar, no graph kept; the DeepSpeed engine (no explicit zero_grad) zeroes grads itself
# Expect: near-miss: must be silent
import argparse
import os

import deepspeed
import torch
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, RandomSampler

from data_set import Seq2SeqDataSet, coll_fn
from modeling_chatglm import ChatGLMForConditionalGeneration
from tokenization_chatglm import ChatGLMTokenizer


def set_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_path", default="data/spo_0.json", type=str)
    parser.add_argument("--model_dir", default="ChatGLM-6B/", type=str)
    parser.add_argument("--num_train_epochs", default=5, type=int)
    parser.add_argument("--train_batch_size", default=2, type=int)
    parser.add_argument("--gradient_accumulation_steps", default=1, type=int)
    parser.add_argument("--output_dir", default="output_dir_lora/", type=str)
    parser.add_argument("--log_steps", type=int, default=10)
    parser.add_argument("--max_len", type=int, default=768)
    parser.add_argument("--max_src_len", type=int, default=450)
    parser.add_argument("--lora_r", type=int, default=8)
    parser.add_argument("--prompt_text", type=str, default="")
    return parser.parse_args()


def main():
    args = set_args()
    model = ChatGLMForConditionalGeneration.from_pretrained(args.model_dir)
    tokenizer = ChatGLMTokenizer.from_pretrained(args.model_dir)
    config = LoraConfig(r=args.lora_r, lora_alpha=32, target_modules=["query_key_value"],
                        lora_dropout=0.1, bias="none", task_type="CAUSAL_LM", inference_mode=False)
    model = get_peft_model(model, config).half().cuda()

    conf = {"train_micro_batch_size_per_gpu": args.train_batch_size,
            "gradient_accumulation_steps": args.gradient_accumulation_steps,
            "optimizer": {"type": "Adam", "params": {"lr": 1e-5, "betas": [0.9, 0.95], "eps": 1e-8}},
            "fp16": {"enabled": True},
            "zero_optimization": {"stage": 1, "offload_optimizer": {"device": "cpu", "pin_memory": True}},
            "steps_per_print": args.log_steps}

    train_dataset = Seq2SeqDataSet(args.train_path, tokenizer, args.max_len, args.max_src_len, args.prompt_text)
    train_dataloader = DataLoader(train_dataset, batch_size=conf["train_micro_batch_size_per_gpu"],
                                  sampler=RandomSampler(train_dataset), collate_fn=coll_fn, drop_last=True)
    model_engine, optimizer, _, _ = deepspeed.initialize(config=conf, model=model, model_parameters=model.parameters())
    model_engine.train()
    global_step = 0
    for i_epoch in range(args.num_train_epochs):
        tr_loss = 0.0
        for step, batch in enumerate(train_dataloader):
            input_ids = batch["input_ids"].cuda()
            labels = batch["labels"].cuda()
            outputs = model_engine.forward(input_ids=input_ids, labels=labels)
            loss = outputs[0]
            if conf["gradient_accumulation_steps"] > 1:
                loss = loss / conf["gradient_accumulation_steps"]
            tr_loss += loss.detach().float()
            model_engine.backward(loss)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if (step + 1) % conf["gradient_accumulation_steps"] == 0:
                model_engine.step()
                global_step += 1
            if global_step % args.log_steps == 0:
                print("epoch:{}, loss:{:.4f}, global_step:{}".format(i_epoch, float(tr_loss / (step + 1)), global_step))
        save_dir = os.path.join(args.output_dir, f"global_step-{global_step}")
        model_engine.save_pretrained(save_dir)


if __name__ == "__main__":
    main()
