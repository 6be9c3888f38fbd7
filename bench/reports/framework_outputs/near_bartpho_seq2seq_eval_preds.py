# Source: https://github.com/nhatkhangcs/BARTpho-VietBana/blob/b0d87f8ef1c862ac7bb08b68241599e22f6c0c41/trainer/custom_bartpho_trainer.py
# Report: Vietnamese-Bahnar BARTpho fine-tuning with Seq2SeqTrainer and a sacrebleu compute_metrics; the repository leaves eval_accumulation_steps unset, this fixed variant sets it
# Shape: with eval_accumulation_steps=16 the inherited Trainer.evaluation_loop copies the gathered generated ids and labels to the host every 16 eval steps, so the GPU holds at most 16 batches of predictions whatever the size of the valid/test set
# Expect: near-miss: must be silent
import numpy as np
from datasets import load_metric
from transformers import AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments
from transformers.models.mbart import MBartForConditionalGeneration

from custom_dataset.vi_ba_aligned_dataset import ViBaDataset


def get_metric(metric_, tokenizer_):
    def postprocess_text(preds, labels):
        return [p.strip() for p in preds], [[l.strip()] for l in labels]

    def compute_metrics(eval_preds):
        preds, labels = eval_preds
        if isinstance(preds, tuple):
            preds = preds[0]
        decoded_preds = tokenizer_.batch_decode(preds, skip_special_tokens=True)
        labels = np.where(labels != -100, labels, tokenizer_.pad_token_id)
        decoded_labels = tokenizer_.batch_decode(labels, skip_special_tokens=True)
        decoded_preds, decoded_labels = postprocess_text(decoded_preds, decoded_labels)
        result = {"bleu": metric_.compute(predictions=decoded_preds, references=decoded_labels)["score"]}
        result["gen_len"] = np.mean([np.count_nonzero(p != tokenizer_.pad_token_id) for p in preds])
        return {k: round(v, 4) for k, v in result.items()}

    return compute_metrics


def main():
    model_checkpoint = "pretrained/bartpho_syllable_aligned"
    metric = load_metric("sacrebleu")
    tokenizer = AutoTokenizer.from_pretrained(model_checkpoint)
    model = MBartForConditionalGeneration.from_pretrained(model_checkpoint)
    model.resize_token_embeddings(len(tokenizer.get_vocab()))
    compute_metric_func = get_metric(metric, tokenizer)
    train_dataset, valid_dataset, test_dataset = ViBaDataset.get_datasets(
        data_folder="data/new_all", tokenizer_path=model_checkpoint)

    batch_size = 4
    data_collator = DataCollatorForSeq2Seq(tokenizer, model=model)
    trainer_args = Seq2SeqTrainingArguments(
        "/content/checkpoint/viba_bart-finetuned",
        metric_for_best_model="bleu",
        evaluation_strategy="steps",
        eval_steps=500,
        learning_rate=2e-5,
        per_device_train_batch_size=batch_size,
        per_device_eval_batch_size=batch_size,
        weight_decay=0.01,
        save_total_limit=3,
        num_train_epochs=4,
        predict_with_generate=True,
        eval_accumulation_steps=16,
        logging_steps=1000,
        logging_dir="logging/viba_bart-finetuned",
    )

    trainer = Seq2SeqTrainer(
        model,
        trainer_args,
        train_dataset=train_dataset,
        eval_dataset=valid_dataset,
        data_collator=data_collator,
        tokenizer=tokenizer,
        compute_metrics=compute_metric_func,
    )
    print(trainer.evaluate(eval_dataset=valid_dataset, num_beams=5, max_length=512))
    trainer.train()
    print(trainer.evaluate(test_dataset, num_beams=5, max_length=512))
    trainer.save_model("checkpoint/best_aligned")


if __name__ == "__main__":
    main()
