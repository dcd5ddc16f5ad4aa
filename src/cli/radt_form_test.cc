#include "cli/radt_form.h"

#include <gtest/gtest.h>

#include "schedule/experiment_file.h"

namespace tb::cli {
namespace {

RadtCommand Parsed(const std::vector<std::string>& args) {
  std::optional<Result<RadtCommand>> c = ParseRadtForm(args);
  EXPECT_TRUE(c.has_value());
  EXPECT_TRUE(c->ok()) << c->status().message();
  return c->value();
}

std::string Refusal(const std::vector<std::string>& args) {
  std::optional<Result<RadtCommand>> c = ParseRadtForm(args);
  EXPECT_TRUE(c.has_value());
  EXPECT_FALSE(c->ok());
  return c->ok() ? "" : c->status().message();
}

TEST(RadtFormTest, SubcommandsAndHelpAreNotRadtsForm) {
  EXPECT_FALSE(ParseRadtForm({"run", "train.py"}).has_value());
  EXPECT_FALSE(ParseRadtForm({"schedule", "exp.csv"}).has_value());
  EXPECT_FALSE(ParseRadtForm({"--help"}).has_value());
  EXPECT_FALSE(ParseRadtForm({}).has_value());
  EXPECT_FALSE(ParseRadtForm({"-e", "3"}).has_value());  // no file: CLI11 says what is wrong
}

TEST(RadtFormTest, AScriptWithRadtsOptionsBecomesAOneRowExperiment) {
  RadtCommand c = Parsed({"-e", "3", "-w", "7", "-c", "mps", "-d", "1", "-i", "2", "-t", "90", "train.py",
                          "batch-size=128", "trainer.max_epochs=2", "--lr", "0.1", "two words"});
  EXPECT_TRUE(c.is_script());
  EXPECT_EQ(c.max_epochs, 2);
  EXPECT_EQ(c.max_minutes, 90);
  ScheduleOptions o = ScheduleFor(c, /*has_gpu=*/true);
  EXPECT_EQ(o.max_epochs, 2);
  EXPECT_EQ(o.max_time, "90m");
  Result<ExperimentFile> f = ParseExperimentFile(o.text, o.file);
  ASSERT_TRUE(f.ok()) << f.status().message() << "\n" << o.text;
  ASSERT_EQ(f->rows.size(), 1u);
  const ExperimentRow& row = f->rows[0];
  EXPECT_EQ(row.experiment, "3");
  EXPECT_EQ(row.workload, "7");
  EXPECT_EQ(row.devices, "1");
  EXPECT_EQ(row.file, "train.py");
  // The script gets its words exactly as typed.
  EXPECT_EQ(ParamsToArguments(row.params),
            (std::vector<std::string>{"batch-size=128", "trainer.max_epochs=2", "--lr", "0.1", "two words"}));
}

TEST(RadtFormTest, DefaultsFollowTheMachine) {
  RadtCommand c = Parsed({"train.py"});
  EXPECT_EQ(ParseExperimentFile(ScriptAsExperiment(c, true), "x").value().rows[0].devices, "0");
  EXPECT_EQ(ParseExperimentFile(ScriptAsExperiment(c, false), "x").value().rows[0].devices, "-");
  EXPECT_EQ(ParseExperimentFile(ScriptAsExperiment(c, false), "x").value().rows[0].experiment, "Default");
}

TEST(RadtFormTest, AnExperimentFileTakesTheScheduleOptions) {
  RadtCommand c = Parsed({"--rerun", "-i", "3", "exp.csv"});
  ScheduleOptions o = ScheduleFor(c, false);
  EXPECT_TRUE(o.rerun);
  EXPECT_EQ(o.file, "exp.csv");
  EXPECT_TRUE(o.text.empty());
  EXPECT_EQ(o.max_epochs, 3);
  EXPECT_TRUE(Parsed({"--local", "-r", "exp.csv"}).rerun);
}

// radT 0.2.29's other options: -n names the run as radT does, --buffered leaves Python's
// buffering; --conda, --manual and --poll_interval are accepted, each with a note of what
// trainbench does instead (a refusal stopped the whole command before).
TEST(RadtFormTest, Radt0229sOptionsWorkOrSayWhatTrainbenchDoesInstead) {
  RadtCommand c = Parsed({"-n", "baseline", "--buffered", "--manual", "--conda", "--poll_interval", "2.5",
                          "-l", "smi+top+dcgmi+iostat+free", "train.py"});
  EXPECT_EQ(c.name, "baseline");
  EXPECT_TRUE(c.buffered);
  ASSERT_EQ(c.notes.size(), 3u);
  EXPECT_NE(c.notes[0].find("--manual"), std::string::npos);
  EXPECT_NE(c.notes[1].find("--conda"), std::string::npos);
  EXPECT_NE(c.notes[2].find("--poll_interval"), std::string::npos);
  ExperimentRow row = ParseExperimentFile(ScriptAsExperiment(c, false), "x").value().rows[0];
  EXPECT_EQ(row.name, "baseline");
  EXPECT_EQ(row.listeners, "smi+top+dcgmi+iostat+free");
  EXPECT_EQ(Parsed({"--name=two words", "train.py"}).name, "two words");
  EXPECT_NE(Refusal({"--poll_interval", "soon", "train.py"}).find("positive number of seconds"),
            std::string::npos);
}

// The form radT's own scheduler runs for each run: `radt run -l L -c FILE -p "PARAMS"`.
TEST(RadtFormTest, RadtsPerRunFormIsTrainbenchsRun) {
  using Args = std::vector<std::string>;
  EXPECT_EQ(RadtRunForm({"run", "-l", "smi+top", "-c", "train.py", "-p", "--lr 0.1 'two words'"})->value(),
            (Args{"run", "-l", "smi+top", "train.py", "--lr", "0.1", "two words"}));
  EXPECT_EQ(RadtRunForm({"run", "--listeners=none", "--command=train.py"})->value(),
            (Args{"run", "-l", "none", "train.py"}));
  EXPECT_FALSE(RadtRunForm({"run", "-l", "top", "--", "python3", "x.py", "-c", "y"}).has_value())
      << "trainbench's own run, whose command has a -c";
  EXPECT_FALSE(RadtRunForm({"schedule", "-c", "x"}).has_value());
  EXPECT_FALSE(RadtRunForm({"run", "-c", "train.py", "-x", "1"})->ok());
}

TEST(RadtFormTest, WhatTrainbenchCannotDoIsRefusedByName) {
  EXPECT_NE(Refusal({"-x", "train.py"}).find("unknown option '-x'"), std::string::npos);
  EXPECT_NE(Refusal({"-i", "five", "train.py"}).find("-i takes a positive number of epochs"),
            std::string::npos);
  EXPECT_NE(Refusal({"-i", "train.py"}).find("-i needs a number of epochs"), std::string::npos);
  EXPECT_NE(Refusal({"-d", "1", "exp.csv"}).find("-d describes a run of a script"), std::string::npos);
  EXPECT_NE(Refusal({"exp.csv", "--rerun"}).find("put options before it"), std::string::npos);
}

}  // namespace
}  // namespace tb::cli
