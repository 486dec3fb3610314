from strata_recall.domain.decisions import Candidate
from strata_recall.domain.pronouns import is_pronoun_subject, referent


def known(subject: str, value: str, similarity: float = 0.5, id: str = "m") -> Candidate:
    return Candidate(id=id, content=f"{subject} is {value}", similarity=similarity,
                     subject=subject, value=value)


def test_his_and_her_stand_for_a_relation_of_that_gender_holding_the_same_attribute() -> None:
    son = known("person:user_son.school", "Greenfield Primary", id="son")
    daughter = known("person:user_daughter.school", "Hillside High", 0.9, id="daughter")
    assert referent("pronoun:he.school", [son, daughter]) == son
    assert referent("pronoun:she.school", [son, daughter]) == daughter
    assert referent("pronoun:they.school", [son, daughter]) == daughter  # the most similar


def test_a_named_person_fits_any_pronoun_and_other_attributes_or_the_user_never_do() -> None:
    ana = known("person:ana.phone", "555-1234", id="ana")
    mine = known("user.phone", "555-0000", 0.99, id="mine")
    brother_job = known("person:user_brother.works_at", "Acme", 0.99, id="job")
    assert referent("pronoun:she.phone", [ana, mine, brother_job]) == ana
    assert referent("pronoun:he.phone", [mine, brother_job]) is None
    assert is_pronoun_subject("pronoun:he.school") and not is_pronoun_subject("user.school")


def test_her_name_is_what_a_relation_the_user_named_is_called() -> None:
    daughter = known("user.daughter", "Ella", id="daughter")
    son = known("user.son", "Leo", 0.9, id="son")
    assert referent("pronoun:she.name", [daughter, son]) == daughter
    assert referent("pronoun:he.name", [daughter, son]) == son
